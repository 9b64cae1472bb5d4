/**
 * What follows a user's new password (on the account page, after a recovery, or a change an
 * administrator required) once it committed, with the user's tokens revoked and its event
 * recorded in its transaction (admin/passwords.ts): the user's other browser sessions end (the
 * ephemeral store), and the user is told by mail (the security notice, queued outside the request).
 */
import type { PasswordChanged } from '../events/audit-events.ts';
import type { Audit } from '../events/record.ts';
import type { SecurityNotices } from '../mail/security-notices.ts';
import type { UserRecord } from '../store/records.ts';

export interface PasswordChangedDeps {
  notices: SecurityNotices;
  /** Ends every browser session of the user but the one of `exceptKey` (this browser's). */
  endOtherSessions(userId: string, exceptKey: string): Promise<unknown>;
}

/** Where the new password was set. */
export type PasswordChangeVia = PasswordChanged['via'];

/**
 * A local account's new password under the policy, with its tokens revoked and its event, in one
 * transaction; undefined when done, else what is wrong with the password (nothing written).
 */
export type ChangeOwnPassword = (userId: string, newPassword: string, confirm: string, via: PasswordChangeVia, audit: Audit) => Promise<string | undefined>;

export type AfterPasswordChange = (user: UserRecord, sessionKey: string) => Promise<void>;

export function createPasswordChanged(deps: PasswordChangedDeps): AfterPasswordChange {
  return async (user, sessionKey) => {
    await deps.endOtherSessions(user.id, sessionKey);
    deps.notices.mail(user, 'password_changed');
  };
}
