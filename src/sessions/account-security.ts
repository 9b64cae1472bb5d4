/**
 * The account page's security changes, without HTTP: the password (local accounts) and the
 * authenticator app. The route checks the CSRF token and the recent sign-in first; each change
 * then mails the user and records its audit event. A refusal changes nothing.
 */
import type { Audit } from '../events/record.ts';
import { generateRecoveryCodes, RECOVERY_CODE_NAME, recoveryCodesLeft, regenerateRecoveryCodes, type RecoveryCodeDeps } from '../factors/recovery-codes.ts';
import type { SecurityNotices } from '../factors/security-notices.ts';
import { verifyPassword } from '../sources/passwords.ts';
import { factorKinds, totpFactor } from '../store/records.ts';
import type { EphemeralStore, FactorRepository } from '../store/types.ts';
import type { AccountBase, SignedIn } from './account.ts';
import type { SessionStore } from './browser-session.ts';
import type { Enrolment } from './flow-types.ts';
import { enrolmentOf, type MfaSecrets } from './mfa.ts';
import { acceptTotp } from './totp.ts';

export interface AccountSecurityDeps {
  base: AccountBase;
  ephemeral: Pick<EphemeralStore, 'rates' | 'usedTotpCodes'>;
  mfa: MfaSecrets;
  factors: Pick<FactorRepository, 'remove'>;
  sessions: Pick<SessionStore, 'save'>;
  recoveryCodes: RecoveryCodeDeps;
  notices: SecurityNotices;
  /** A local account's new password under the policy, revoking the user's tokens; the problem, if any. */
  changePassword(userId: string, newPassword: string, confirm: string): Promise<string | undefined>;
  /** Ends the user's browser sessions but the one at `keepKey` (the one making the change). */
  endOtherSessions(userId: string, keepKey: string): Promise<unknown>;
}

/** What the page says of a refused change, and the fields in error. */
export interface Refusal {
  error: string;
  invalid: string[];
}

/** An authenticator app set up: the new recovery codes to show once (none when another tab's app was stored first). */
export interface TotpAdded {
  codes: string[] | undefined;
}

/** Tries of the current password per user in a window: a session left open is not its owner. */
const PASSWORD_TRIES = 5;
const PASSWORD_TRY_WINDOW_SECONDS = 15 * 60;

/** A local account whose password the service keeps (directory and upstream accounts have none here). */
export const canChangePassword = ({ user }: SignedIn) => user.source === 'local' && user.passwordHash !== null;

export function createAccountSecurity(deps: AccountSecurityDeps) {
  const { base, mfa } = deps;
  // The secret being set up travels sealed in the form, bound to this browser session.
  const enrolContext = ({ loaded }: SignedIn) => `account:${loaded.key}`;

  async function changePassword(signedIn: SignedIn, form: Record<string, string>, audit: Audit): Promise<Refusal | undefined> {
    const { user } = signedIn;
    if (!canChangePassword(signedIn) || !user.passwordHash) return { error: 'The password of this account is not kept by this service.', invalid: [] };
    const window = Math.floor(base.now() / PASSWORD_TRY_WINDOW_SECONDS);
    const tries = await deps.ephemeral.rates.add(`account-password:${user.id}`, window, PASSWORD_TRY_WINDOW_SECONDS);
    if (tries > PASSWORD_TRIES) return { error: 'Too many tries. Wait a few minutes, then try again.', invalid: [] };
    if (!(await verifyPassword(user.passwordHash, form.current_password ?? ''))) {
      return { error: 'The current password is not right.', invalid: ['current_password'] };
    }
    const [newPassword, confirm] = [form.new_password ?? '', form.confirm_password ?? ''];
    const problem = await deps.changePassword(user.id, newPassword, confirm);
    if (problem) return { error: problem, invalid: [newPassword === confirm ? 'new_password' : 'confirm_password'] };
    await deps.endOtherSessions(user.id, signedIn.loaded.key);
    audit({ type: 'password_changed', user_id: user.id });
    deps.notices.mail(user, 'password_changed');
    return undefined;
  }

  /** A new secret to set the app up with, and the sealed copy the confirming form posts back. */
  async function startTotp(signedIn: SignedIn): Promise<{ enrolment: Enrolment; sealed: string }> {
    const { secret, sealed } = mfa.startEnrolment(enrolContext(signedIn));
    return { enrolment: await enrolmentOf(mfa, signedIn.user.username, secret), sealed };
  }

  /** The enrolment of `sealed` again (the page shown after a wrong code); undefined when it does not open. */
  async function resumeTotp(signedIn: SignedIn, sealed: string): Promise<Enrolment | undefined> {
    const secret = openEnrolment(signedIn, sealed);
    return secret === undefined ? undefined : enrolmentOf(mfa, signedIn.user.username, secret);
  }

  function openEnrolment(signedIn: SignedIn, sealed: string): string | undefined {
    try {
      return mfa.openEnrolSecret(enrolContext(signedIn), sealed);
    } catch {
      return undefined;
    }
  }

  /** Keeps the app once its first code is right, with a new set of recovery codes (as at enrolment during sign-in). */
  async function confirmTotp(signedIn: SignedIn, sealed: string, code: string, audit: Audit): Promise<Refusal | TotpAdded> {
    const { user } = signedIn;
    if (user.source === 'oidc') return { error: 'Your sign-in provider asks for your second factors.', invalid: [] };
    if (totpFactor(user)) return { error: 'An authenticator app is set up already. Remove it first.', invalid: [] };
    const secret = openEnrolment(signedIn, sealed);
    if (secret === undefined) return { error: 'This set-up has expired. Start again.', invalid: [] };
    if (!(await acceptTotp(deps.ephemeral, user.id, secret, code, base.now()))) {
      return { error: 'That code is not right. Enter the code your app shows now.', invalid: ['otp'] };
    }
    const stored = await mfa.enrol(user.id, secret);
    // As at enrolment during sign-in: the code just given is this session's second factor.
    const { key, session } = signedIn.loaded;
    await deps.sessions.save(key, { ...session, amr: [...new Set([...session.amr, 'mfa'])] });
    // Another tab's app was stored first: its codes stand, this one makes none to void them.
    if (!stored) return { codes: undefined };
    const codes = await generateRecoveryCodes(deps.recoveryCodes, user.id);
    audit({ type: 'mfa_added', user_id: user.id, kind: 'totp' });
    audit({ type: 'recovery_codes_generated', user_id: user.id, count: codes.length });
    deps.notices.mail(user, 'mfa_added', `An authenticator app was set up, with ${codes.length} new recovery codes.`);
    return { codes };
  }

  /**
   * Removes the app; recovery codes go with it when no other second factor is left (a recovery
   * code stands in for a factor, and is no factor of its own).
   */
  async function removeTotp(signedIn: SignedIn, audit: Audit): Promise<void> {
    const { user } = signedIn;
    const factor = totpFactor(user);
    // Of two removals at once, the one that deleted the row reports it.
    if (!factor || !(await deps.factors.remove(factor.id))) return;
    const othersLeft = factorKinds(user).some((kind) => kind !== 'totp' && kind !== 'recovery_code');
    const codesToo = !othersLeft && recoveryCodesLeft(user) > 0;
    if (codesToo) await deps.recoveryCodes.factors.replaceRecoveryCodes(user.id, [], RECOVERY_CODE_NAME);
    audit({ type: 'mfa_removed', user_id: user.id, kinds: codesToo ? ['totp', 'recovery_code'] : ['totp'], actor: 'user' });
    deps.notices.mail(user, 'mfa_removed', codesToo ? 'The authenticator app was removed, and your recovery codes with it.' : 'The authenticator app was removed.');
  }

  /** "Generate new codes": a new set to show once; the old set no longer works. */
  const newRecoveryCodes = (signedIn: SignedIn, audit: Audit) => regenerateRecoveryCodes({ ...deps.recoveryCodes, notices: deps.notices }, signedIn.user, audit);

  return { changePassword, startTotp, resumeTotp, confirmTotp, removeTotp, newRecoveryCodes };
}

export type AccountSecurity = ReturnType<typeof createAccountSecurity>;
