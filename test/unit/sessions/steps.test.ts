/**
 * The flow's next-step decision (src/sessions/steps.ts nextStep) as one table: each row changes
 * the base case (a signed-in user, a plain request, a client that needs no consent: `done`) by
 * the conditions that should lead elsewhere, and names the step or the error it expects. The
 * base case and the coverage checks at the end keep every row able to fail: a row only passes
 * when its own conditions make the difference.
 */
import { describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/errors.ts';
import type { AuthorizationRequest } from '../../../src/sessions/authorization-request.ts';
import type { BrowserSession } from '../../../src/sessions/browser-session.ts';
import type { Interaction, PendingSignIn } from '../../../src/sessions/interaction.ts';
import { nextStep, type Step, type StepInput } from '../../../src/sessions/steps.ts';
import type { ClientRecord, FactorRecord, UserRecord } from '../../../src/store/records.ts';

const NOW = 1_800_000_000;
const AUTH_TIME = NOW - 100;

/** An enrolled authenticator app. */
/** A registered passkey. */
const PASSKEY: FactorRecord = {
  id: 'f-2', userId: 'u-bob', kind: 'passkey', name: 'Laptop', secretSealed: null, createdAt: new Date(0), lastUsedAt: null,
  passkey: { credentialId: 'cred', publicKey: 'key', signCount: 0, transports: [], backupEligible: false, backedUp: false, aaguid: '' },
};
const TOTP: FactorRecord = { id: 'f-1', userId: 'u-alice', kind: 'totp', name: 'Authenticator app', secretSealed: 'sealed', createdAt: new Date(0), lastUsedAt: null };
/** A recovery code left (the authenticator app removed). */
const RECOVERY: FactorRecord = { id: 'f-2', userId: 'u-alice', kind: 'recovery_code', name: 'Recovery code', secretSealed: null, createdAt: new Date(0), lastUsedAt: null };

function user(overrides: Partial<UserRecord> = {}): UserRecord {
  return {
    id: 'u-alice', source: 'local', subject: 'sub-alice', username: 'alice', passwordHash: null, givenName: null, familyName: null,
    name: null, email: null, emailVerified: false, phoneNumber: null, phoneNumberVerified: false, roles: [], factors: [],
    locked: false, mustChangePassword: false, mustEnrolMfa: false, createdAt: new Date(0), updatedAt: new Date(0), ...overrides,
  };
}

const client: ClientRecord = {
  clientId: 'app', displayName: 'App', enabled: true, secretHash: null, secretExpiresAt: null, grantTypes: ['authorization_code'],
  scopes: ['openid', 'profile'], redirectUris: ['https://app.example/cb'], postLogoutRedirectUris: [], corsOrigins: [],
  accessTokenLifetime: 600, requireConsent: false,
};

const request: AuthorizationRequest = {
  clientId: 'app', redirectUri: 'https://app.example/cb', responseMode: 'query', state: undefined, scopes: ['openid', 'profile'],
  codeChallenge: 'x'.repeat(43), nonce: undefined, prompt: [], maxAge: undefined, hintSubject: undefined, claims: undefined,
};

const session: BrowserSession = { userId: 'u-alice', authTime: AUTH_TIME, amr: ['pwd'], clients: [], createdAt: AUTH_TIME };

const interaction: Interaction = {
  id: 'i-1', request, sessionKey: 'k', csrfToken: 'c', signedInAt: null, pending: null, consentGiven: false, createdAt: NOW - 10,
};

const pending = (amr = ['pwd']): PendingSignIn => ({ userId: 'u-bob', username: 'bob', amr, enrolSecretSealed: null });
const bob = (overrides: Partial<UserRecord> = {}) => user({ id: 'u-bob', subject: 'sub-bob', username: 'bob', ...overrides });

/** What a row changes in the base case (the request and the interaction merge into the base's). */
interface Given {
  request?: Partial<AuthorizationRequest>;
  interaction?: Partial<Interaction>;
  session?: BrowserSession | undefined;
  user?: UserRecord | undefined;
  pendingUser?: UserRecord | undefined;
  client?: Partial<ClientRecord>;
  consented?: string[];
}

function input(given: Given): StepInput {
  return {
    interaction: { ...interaction, ...given.interaction, request: { ...request, ...given.request } },
    session: 'session' in given ? given.session : session,
    user: 'user' in given ? given.user : user(),
    pendingUser: given.pendingUser,
    client: { ...client, ...given.client },
    consented: given.consented ?? [],
    now: NOW,
  };
}

/** The step, or the code of the error (prompt=none). */
function decide(given: Given): Step | string {
  try {
    return nextStep(input(given));
  } catch (error) {
    if (error instanceof OAuthError) return `error:${error.code}`;
    throw error;
  }
}

const rows: Array<[string, Given, Step | string]> = [
  ['base case: signed in, nothing owed, no consent asked', {}, 'done'],
  // No usable session.
  ['no session', { session: undefined, user: undefined }, 'sign-in'],
  ['an anonymous session', { session: { ...session, userId: null, authTime: null }, user: undefined }, 'sign-in'],
  ['the session user no longer exists', { user: undefined }, 'sign-in'],
  ['the session user is locked', { user: user({ locked: true }) }, 'sign-in'],
  ['a session without auth_time', { session: { ...session, authTime: null } }, 'sign-in'],
  ['the session user now owes a code (TOTP, amr pwd)', { user: user({ factors: [TOTP] }) }, 'sign-in'],
  ['the session user owes enrolment', { user: user({ mustEnrolMfa: true }) }, 'sign-in'],
  ['the session user with TOTP signed in with mfa', { user: user({ factors: [TOTP] }), session: { ...session, amr: ['pwd', 'mfa'] } }, 'done'],
  ['the session user with TOTP came from an upstream (external)', { user: user({ factors: [TOTP] }), session: { ...session, amr: ['external'] } }, 'done'],
  ['the session user signed in with a factor an administrator has since removed (flagged to enrol)', { user: user({ mustEnrolMfa: true }), session: { ...session, amr: ['pwd', 'mfa'] } }, 'sign-in'],
  ['the session user flagged to enrol, signed in with mfa, still holding a factor', { user: user({ mustEnrolMfa: true, factors: [TOTP] }), session: { ...session, amr: ['pwd', 'mfa'] } }, 'done'],
  ['the session user must change a local password', { user: user({ mustChangePassword: true }) }, 'sign-in'],
  ['a directory user flagged for a password change owes nothing here', { user: user({ mustChangePassword: true, source: 'ldap' }) }, 'done'],
  // prompt, max_age, id_token_hint.
  ['prompt=login', { request: { prompt: ['login'] } }, 'sign-in'],
  ['prompt=login, signed in within this interaction', { request: { prompt: ['login'] }, interaction: { signedInAt: NOW } }, 'done'],
  ['prompt=select_account', { request: { prompt: ['select_account'] } }, 'sign-in'],
  ['max_age=0', { request: { maxAge: 0 } }, 'sign-in'],
  ['max_age shorter than the sign-in is old', { request: { maxAge: 99 } }, 'sign-in'],
  ['max_age exactly as old as the sign-in', { request: { maxAge: 100 } }, 'done'],
  ['max_age exceeded, but signed in within this interaction', { request: { maxAge: 99 }, interaction: { signedInAt: NOW } }, 'done'],
  ['id_token_hint names another user', { request: { hintSubject: 'sub-someone-else' } }, 'sign-in'],
  ['id_token_hint names the session user', { request: { hintSubject: 'sub-alice' } }, 'done'],
  // Consent.
  ['the client asks consent for scopes not consented', { client: { requireConsent: true }, consented: ['openid'] }, 'consent'],
  ['the client asks consent, every scope consented before', { client: { requireConsent: true }, consented: ['openid', 'profile'] }, 'done'],
  ['the client asks consent, given in this interaction', { client: { requireConsent: true }, interaction: { consentGiven: true } }, 'done'],
  ['prompt=consent for a client that asks none', { request: { prompt: ['consent'] } }, 'consent'],
  ['prompt=consent, every scope consented before', { request: { prompt: ['consent'] }, client: { requireConsent: true }, consented: ['openid', 'profile'] }, 'consent'],
  ['prompt=consent, given in this interaction', { request: { prompt: ['consent'] }, interaction: { consentGiven: true } }, 'done'],
  // prompt=none: a page would be needed, so an error for the client instead.
  ['prompt=none without a session', { request: { prompt: ['none'] }, session: undefined, user: undefined }, 'error:login_required'],
  ['prompt=none with max_age exceeded', { request: { prompt: ['none'], maxAge: 10 } }, 'error:login_required'],
  ['prompt=none while the session user owes a step', { request: { prompt: ['none'] }, user: user({ factors: [TOTP] }) }, 'error:interaction_required'],
  ['prompt=none when consent is needed', { request: { prompt: ['none'] }, client: { requireConsent: true } }, 'error:consent_required'],
  ['prompt=none with nothing to ask', { request: { prompt: ['none'] } }, 'done'],
  // A pending sign-in (the password was right) decides first.
  ['pending, its user gone', { interaction: { pending: pending() }, pendingUser: undefined }, 'sign-in'],
  ['pending, its user locked since', { interaction: { pending: pending() }, pendingUser: bob({ locked: true }) }, 'sign-in'],
  ['pending, the user has TOTP', { interaction: { pending: pending() }, pendingUser: bob({ factors: [TOTP] }) }, 'otp'],
  ['pending, the user has TOTP and is flagged to enrol', { interaction: { pending: pending() }, pendingUser: bob({ factors: [TOTP], mustEnrolMfa: true }) }, 'otp'],
  ['pending, the user holds recovery codes only', { interaction: { pending: pending() }, pendingUser: bob({ factors: [RECOVERY] }) }, 'otp'],
  ['pending, the user must enrol', { interaction: { pending: pending() }, pendingUser: bob({ mustEnrolMfa: true }) }, 'enrol'],
  ['pending, the user has a passkey', { interaction: { pending: pending() }, pendingUser: bob({ factors: [PASSKEY] }) }, 'otp'],
  ['pending, the user has a passkey and passed it', { interaction: { pending: pending(['pwd', 'mfa']) }, pendingUser: bob({ factors: [PASSKEY] }) }, 'finish-sign-in'],
  ['pending, code given, a password change owed', { interaction: { pending: pending(['pwd', 'mfa']) }, pendingUser: bob({ factors: [TOTP], mustChangePassword: true }) }, 'password'],
  ['pending, must enrol and change the password', { interaction: { pending: pending() }, pendingUser: bob({ mustEnrolMfa: true, mustChangePassword: true }) }, 'enrol'],
  ['pending, a local password change owed', { interaction: { pending: pending() }, pendingUser: bob({ mustChangePassword: true }) }, 'password'],
  ['pending, a directory user flagged for a password change', { interaction: { pending: pending() }, pendingUser: bob({ mustChangePassword: true, source: 'ldap' }) }, 'finish-sign-in'],
  ['pending, every step passed', { interaction: { pending: pending(['pwd', 'mfa']) }, pendingUser: bob({ factors: [TOTP] }) }, 'finish-sign-in'],
  ['pending, nothing owed', { interaction: { pending: pending() }, pendingUser: bob() }, 'finish-sign-in'],
  ['pending from an upstream (external) with TOTP', { interaction: { pending: pending(['external']) }, pendingUser: bob({ factors: [TOTP] }) }, 'finish-sign-in'],
  // The administration console's built-in client: a second factor always, enrolled first by a user without one.
  ['console: pending, no second factor', { client: { clientId: 'idp-admin-console' }, interaction: { pending: pending() }, pendingUser: bob() }, 'enrol'],
  ['console: pending, the code given', { client: { clientId: 'idp-admin-console' }, interaction: { pending: pending(['pwd', 'mfa']) }, pendingUser: bob({ factors: [TOTP] }) }, 'finish-sign-in'],
  ['console: a session signed in without a second factor', { client: { clientId: 'idp-admin-console' } }, 'sign-in'],
  ['console: a session signed in with one', { client: { clientId: 'idp-admin-console' }, session: { ...session, amr: ['pwd', 'mfa'] }, user: user({ factors: [TOTP] }) }, 'done'],
  // A password recovery: the right code stood in for the password; never a sign-in.
  ['recovery, the user has TOTP', { interaction: { pending: { ...pending([]), recovery: true } }, pendingUser: bob({ factors: [TOTP] }) }, 'otp'],
  ['recovery, code given', { interaction: { pending: { ...pending(['mfa']), recovery: true } }, pendingUser: bob({ factors: [TOTP] }) }, 'password'],
  ['recovery, no second factor', { interaction: { pending: { ...pending([]), recovery: true } }, pendingUser: bob() }, 'password'],
  ['recovery of a user flagged to enrol: no enrolment on the way', { interaction: { pending: { ...pending([]), recovery: true } }, pendingUser: bob({ mustEnrolMfa: true }) }, 'password'],
  ['recovery, its user locked since', { interaction: { pending: { ...pending([]), recovery: true } }, pendingUser: bob({ locked: true }) }, 'sign-in'],
  ['pending wins over prompt=none and a missing session', { request: { prompt: ['none'] }, session: undefined, user: undefined, interaction: { pending: pending() }, pendingUser: bob() }, 'finish-sign-in'],
];

describe('nextStep', () => {
  it.each(rows.map(([name, given, expected]) => ({ name, given, expected })))('$name -> $expected', ({ given, expected }) => {
    expect(decide(given)).toBe(expected);
  });

  it('has a row for every step and every prompt=none error, so that no constant answer passes', () => {
    const expected = new Set(rows.map(([, , outcome]) => outcome));
    const all: Array<Step | string> = ['sign-in', 'otp', 'enrol', 'password', 'finish-sign-in', 'consent', 'done',
      'error:login_required', 'error:interaction_required', 'error:consent_required'];
    expect([...expected].sort()).toStrictEqual([...all].sort());
  });
});
