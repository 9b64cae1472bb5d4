/**
 * Mail the service sends (password recovery codes, security notices, email verification). A
 * message is handed over and the caller goes on: sending happens outside the request, so a slow
 * or failing mail server never slows or fails a page.
 */

export interface MailMessage {
  to: string;
  subject: string;
  /** Every message has a plain-text part. */
  text: string;
  html: string;
}

/** What became of the messages handed to a mailer that sends them (idp_mail_sent_total). */
export interface MailResults {
  sent: number;
  failed: number;
  /** Never tried: the queue was full, or the service shut down first. */
  dropped: number;
}

export interface Mailer {
  /** False in production without IDP_SMTP_URL: the features that need mail are not offered. */
  readonly available: boolean;
  /** Queues the message; never throws, never waits for the mail server. */
  send(message: MailMessage): void;
  /** The counts so far, for /metrics; only a mailer that talks to a mail server has them. */
  results?(): MailResults;
  /** Sends what is queued (for a while) and lets go of the mail server; at shutdown. */
  close?(): Promise<void>;
}

/** What the log mailer writes with: a pino logger's `info` fits. */
export type MailLog = (fields: Record<string, unknown>, message: string) => void;

/** Outside production without IDP_SMTP_URL: each message becomes a log line with `"mail": true`. */
export function createLogMailer(log: MailLog): Mailer {
  return {
    available: true,
    send(message) {
      log({ mail: true, to: message.to, subject: message.subject, text: message.text }, 'mail');
    },
  };
}

/** Production without IDP_SMTP_URL: nothing can be sent, and the features that need mail are off. */
export const NO_MAILER: Mailer = { available: false, send() {} };
