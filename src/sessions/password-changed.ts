/**
 * What follows a user's new password (on the account page, after a recovery, or a change an
 * administrator required), once the user's tokens are revoked: the user's other browser sessions
 * end, the user is told by mail (the security notice, queued outside the request), and the event
 * is recorded.
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

export type AfterPasswordChange = (user: UserRecord, via: PasswordChangeVia, audit: Audit, sessionKey: string) => Promise<void>;

export function createPasswordChanged(deps: PasswordChangedDeps): AfterPasswordChange {
  return async (user, via, audit, sessionKey) => {
    await deps.endOtherSessions(user.id, sessionKey);
    audit({ type: 'password_changed', user_id: user.id, via });
    deps.notices.mail(user, 'password_changed');
  };
}
