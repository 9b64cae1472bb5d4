/**
 * What follows a new password taken at the password page (after a recovery, or a change an
 * administrator required), once the user's tokens are revoked: the user's other browser sessions
 * end, the user is told by mail (the security notice, queued outside the request), and the event
 * is recorded.
 */
import type { SecurityNotices } from '../factors/security-notices.ts';
import type { UserRecord } from '../store/records.ts';
import type { BrowserRequest } from './flow-types.ts';

export interface PasswordChangedDeps {
  notices: SecurityNotices;
  /** Ends every browser session of the user but the one of `exceptKey` (this browser's). */
  endOtherSessions(userId: string, exceptKey: string): Promise<unknown>;
}

export function createPasswordChanged(deps: PasswordChangedDeps) {
  return async (user: UserRecord, via: 'recovery' | 'required_change', browser: BrowserRequest, sessionKey: string): Promise<void> => {
    await deps.endOtherSessions(user.id, sessionKey);
    browser.audit({ type: 'password_changed', user_id: user.id, via });
    deps.notices.mail(user, 'password_changed');
  };
}
