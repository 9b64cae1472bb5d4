/**
 * The sign-in steps of an interaction: password, then the second factor (a code, or enrolment
 * for users who must enrol), then a password change for users who must change it, then consent.
 * One pure function decides what comes next, so every prompt/max_age/id_token_hint rule is in
 * one place.
 */
import { OAuthError } from '../../errors.ts';
import { CONSOLE_CLIENT_ID, type ClientRecord, type UserRecord } from '../../store/records.ts';
import type { BrowserSession } from '../browser-session.ts';
import type { Interaction } from './interaction.ts';

/** `finish-sign-in`: the pending user has passed every step; the session becomes theirs. */
export type Step = 'sign-in' | 'otp' | 'enrol' | 'password' | 'finish-sign-in' | 'consent' | 'done';

export interface StepInput {
  interaction: Interaction;
  session: BrowserSession | undefined;
  /** The session's user as stored now; undefined when signed out, removed or unknown. */
  user: UserRecord | undefined;
  /** The interaction's pending user as stored now. */
  pendingUser: UserRecord | undefined;
  client: ClientRecord;
  /** Scopes the user consented to for this client before. */
  consented: readonly string[];
  /** Seconds since the epoch. */
  now: number;
}

/**
 * What a user still owes after the password, given the methods used so far. A password
 * recovery (`recovery`) owes the second factor the user has, then a new password; it enrols none.
 */
export function owedStep(user: UserRecord, amr: readonly string[], recovery = false, mfaRequired = false): 'otp' | 'enrol' | 'password' | undefined {
  if (!amr.includes('mfa') && !amr.includes('external')) {
    // The authenticator code, a passkey or a recovery code: any second factor the user holds is
    // asked for (one with recovery codes only, after losing the others, still owes the step).
    if (user.factors.length > 0) return 'otp';
    if ((user.mustEnrolMfa || mfaRequired) && !recovery) return 'enrol';
  }
  if (recovery || (user.mustChangePassword && user.source === 'local')) return 'password';
  return undefined;
}

/** The administration console's sign-ins need a second factor (enrolled first by a user without one). */
const needsSecondFactor = (client: ClientRecord) => client.clientId === CONSOLE_CLIENT_ID;

function pendingStep({ interaction, pendingUser, client }: StepInput): Step | undefined {
  if (!interaction.pending) return undefined;
  if (!pendingUser || pendingUser.locked) return 'sign-in';
  return owedStep(pendingUser, interaction.pending.amr, interaction.pending.recovery, needsSecondFactor(client)) ?? 'finish-sign-in';
}

/**
 * A session signed in with a second factor the user no longer has, and must enrol anew (an
 * administrator's `idp users reset-mfa`): the phone may be in someone else's hands, so the
 * session goes with the factor.
 */
function lostSecondFactor(user: UserRecord, amr: readonly string[]): boolean {
  return amr.includes('mfa') && user.mustEnrolMfa && user.factors.length === 0;
}

/** Why the session cannot be used as it is: no usable sign-in, or one that owes a step. */
function signInProblem({ interaction, session, user, now, client }: StepInput): 'login' | 'interaction' | undefined {
  const { request } = interaction;
  if (!session?.userId || !user || user.locked || session.authTime === null) return 'login';
  if (owedStep(user, session.amr, false, needsSecondFactor(client)) !== undefined || lostSecondFactor(user, session.amr)) return 'interaction';
  if (interaction.signedInAt !== null) return undefined;
  // OIDC Core §3.1.2.1: login and select_account ask for a fresh sign-in (we have no account picker).
  if (request.prompt.includes('login') || request.prompt.includes('select_account')) return 'login';
  // max_age=0 is prompt=login (whole seconds would let a sign-in this second pass).
  if (request.maxAge === 0) return 'login';
  if (request.maxAge !== undefined && now - session.authTime > request.maxAge) return 'login';
  return request.hintSubject !== undefined && request.hintSubject !== user.subject ? 'login' : undefined;
}

function needsConsent({ interaction, client, consented }: StepInput): boolean {
  if (interaction.consentGiven) return false;
  if (interaction.request.prompt.includes('consent')) return true;
  return client.requireConsent && interaction.request.scopes.some((s) => !consented.includes(s));
}

/**
 * The next step. With prompt=none, a step that needs a page is an error for the client instead
 * (OIDC Core §3.1.2.6): login_required, interaction_required or consent_required.
 */
export function nextStep(input: StepInput): Step {
  const silent = input.interaction.request.prompt.includes('none');
  const pending = pendingStep(input);
  if (pending) return pending;
  const problem = signInProblem(input);
  if (problem) {
    if (silent && problem === 'login') throw new OAuthError('login_required', 'The user must sign in.');
    if (silent) throw new OAuthError('interaction_required', 'The user must complete a step of sign-in.');
    return 'sign-in';
  }
  if (needsConsent(input)) {
    if (silent) throw new OAuthError('consent_required', 'The user must consent.');
    return 'consent';
  }
  return 'done';
}
