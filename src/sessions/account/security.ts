/**
 * The account page's security changes, without HTTP: the password (local accounts) and the
 * authenticator app. The route checks the CSRF token and the recent sign-in first; each change
 * then mails the user and records its audit event. A refusal changes nothing.
 */
import type { Audit } from '../../events/record.ts';
import type { AccountChange } from '../../factors/account-change.ts';
import { removeOwnFactor } from '../../factors/factor-removal.ts';
import { generateRecoveryCodes, regenerateRecoveryCodes, type RecoveryCodeDeps } from '../../factors/recovery-codes.ts';
import type { SecurityNotices } from '../../mail/security-notices.ts';
import { verifyPassword } from '../../sources/passwords.ts';
import { totpFactor } from '../../store/records.ts';
import type { EphemeralStore } from '../../store/types.ts';
import type { AccountBase, SignedIn } from './signed-in.ts';
import type { Enrolment } from '../sign-in/flow-types.ts';
import { enrolmentOf, type MfaSecrets } from '../../factors/authenticator-app.ts';
import type { AfterPasswordChange, ChangeOwnPassword } from '../password-changed.ts';
import { acceptTotp } from '../../factors/totp.ts';

export interface AccountSecurityDeps {
  base: AccountBase;
  ephemeral: Pick<EphemeralStore, 'rates' | 'usedTotpCodes'>;
  mfa: MfaSecrets;
  /** Each change of the user's factors with its events, in one transaction. */
  change: AccountChange;
  recoveryCodes: RecoveryCodeDeps;
  notices: SecurityNotices;
  /** A local account's new password under the policy, revoking the user's tokens, with its event; the problem, if any. */
  changePassword: ChangeOwnPassword;
  /** Ends the user's other browser sessions, tells the user. */
  passwordChanged: AfterPasswordChange;
}

/** What the page says of a refused change, and the fields in error. */
export interface Refusal {
  error: string;
  invalid: string[];
}

/** The refusal of a removal that would leave the user without an authenticator app or passkey. */
export const LAST_FACTOR_REFUSAL: Refusal = {
  error: 'This is your last second factor, and your account must keep one. Add another passkey or an authenticator app first.',
  invalid: [],
};

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
    const problem = await deps.changePassword(user.id, newPassword, confirm, 'account_page', audit);
    if (problem) return { error: problem, invalid: [newPassword === confirm ? 'new_password' : 'confirm_password'] };
    await deps.passwordChanged(user, signedIn.loaded.key);
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
    // The session's sign-in methods stay as they were: a sign-in that used the app is the next one.
    const codes = await deps.change(user.id, audit, async (tx) => {
      // Another tab's app was stored first: its codes stand, this one makes none to void them.
      if (!(await mfa.enrol(user.id, secret, tx.factors))) return { result: undefined, events: [] };
      const codes = await generateRecoveryCodes({ ...deps.recoveryCodes, factors: tx.factors }, user.id);
      return { result: codes, events: [{ type: 'mfa_added' as const, user_id: user.id, kind: 'totp' as const }, { type: 'recovery_codes_generated' as const, user_id: user.id, count: codes.length }] };
    });
    if (!codes) return { codes: undefined };
    deps.notices.mail(user, 'mfa_added', `An authenticator app was set up, with ${codes.length} new recovery codes.`);
    return { codes };
  }

  /** Removes the app, unless it is the user's last second factor (factor-removal.ts). */
  async function removeTotp(signedIn: SignedIn, audit: Audit): Promise<Refusal | undefined> {
    const { user } = signedIn;
    const factor = totpFactor(user);
    // Removed meanwhile (another tab): the page shows it gone.
    if (!factor) return undefined;
    const result = await removeOwnFactor({ change: deps.change, notices: deps.notices, audit }, user, factor, 'The authenticator app was removed.');
    return result === 'last_second_factor' ? LAST_FACTOR_REFUSAL : undefined;
  }

  /** "Generate new codes": a new set to show once; the old set no longer works. Refused without an app or passkey. */
  async function newRecoveryCodes(signedIn: SignedIn, audit: Audit): Promise<Refusal | { codes: string[] }> {
    const codes = await regenerateRecoveryCodes({ ...deps.recoveryCodes, notices: deps.notices, change: deps.change }, signedIn.user, audit);
    return codes ? { codes } : { error: 'Recovery codes come with a second factor: set up an authenticator app or a passkey first.', invalid: [] };
  }

  return { changePassword, startTotp, resumeTotp, confirmTotp, removeTotp, newRecoveryCodes };
}

export type AccountSecurity = ReturnType<typeof createAccountSecurity>;
