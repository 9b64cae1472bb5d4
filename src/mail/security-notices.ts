/**
 * Telling users by mail of security changes to their account (a second factor added or removed,
 * a recovery code used, new recovery codes): sent outside the request (the mailer queues), and
 * only to an address the account has. An account without one, or a deployment that cannot mail,
 * gets the audit event alone.
 */
import type { Clock } from '../clock.ts';
import type { Mailer } from './mailer.ts';
import { securityNoticeMessage, type MailBrand, type SecurityNotice } from './messages.ts';
import type { UserRecord } from '../store/records.ts';

export interface SecurityNotices {
  /** Mails `notice` (with one line of `detail`) to the user's address, if any. */
  mail(user: Pick<UserRecord, 'email'>, notice: SecurityNotice, detail?: string): void;
}

export function createSecurityNotices(deps: { mailer: Mailer; brand: MailBrand; clock: Clock }): SecurityNotices {
  return {
    mail(user, notice, detail) {
      if (!user.email || !deps.mailer.available) return;
      deps.mailer.send(securityNoticeMessage(user.email, deps.brand, notice, new Date(deps.clock()), detail));
    },
  };
}

