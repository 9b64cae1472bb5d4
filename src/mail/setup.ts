/** The mailer and the brand of its messages, from the configuration: made here only (composition/services.ts uses them). */
import type { Config } from '../config.ts';
import { createLogMailer, NO_MAILER, type MailLog, type Mailer } from './mailer.ts';
import type { MailBrand } from './messages.ts';
import { createSmtpMailer } from './smtp-mailer.ts';

export interface MailLogger {
  info: MailLog;
  warn: MailLog;
}

/**
 * IDP_SMTP_URL set: the SMTP mailer. Unset: the log outside production; in production no
 * mailer at all (`available` false), and the features that need mail are not offered.
 */
export function createMailer(config: Config, log: MailLogger): Mailer {
  const { smtp, from } = config.mail;
  if (smtp) return createSmtpMailer({ smtp, from, warn: log.warn });
  return config.production ? NO_MAILER : createLogMailer(log.info);
}

/** What every message is signed with: IDP_BRAND_NAME (else the host of IDP_BASE_URL) and IDP_BRAND_COLOR. */
export function mailBrandOf(config: Config): MailBrand {
  return Object.freeze({ name: config.brand.name ?? new URL(config.baseUrl).host, color: config.brand.color });
}
