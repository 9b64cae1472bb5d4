/**
 * The SMTP mailer: `send` queues the message and returns at once; a few messages at a time go
 * out in the background. A failure is logged (the recipient and why, never the message, its
 * code or the credentials) and counted; nothing of it reaches the page that sent the message.
 */
import { isEmailAddress } from '../email-address.ts';
import type { MailLog, MailMessage, Mailer, MailResults } from './mailer.ts';
import { safeReason, smtpTransport, type SmtpSettings, type SmtpTls } from './smtp.ts';

export interface SmtpMailerOptions {
  smtp: SmtpSettings;
  /** IDP_MAIL_FROM. */
  from: string;
  /** Where failures and dropped messages are told (a pino logger's `warn` fits). */
  warn: MailLog;
  /** Conversations with the mail server at once. */
  concurrency?: number;
  /** Messages waiting at most; beyond, a message is dropped (a mail server down for long must not fill the memory). */
  queueLimit?: number;
  /** How long `close` waits for the messages still queued or in flight. */
  flushMs?: number;
  tls?: SmtpTls;
}

export type SmtpMailer = Mailer & Required<Pick<Mailer, 'results' | 'close'>>;

export function createSmtpMailer(options: SmtpMailerOptions): SmtpMailer {
  const { smtp, from, warn, concurrency = 4, queueLimit = 1000, flushMs = 10_000 } = options;
  const transport = smtpTransport(smtp, options.tls);
  const queue: MailMessage[] = [];
  const results: MailResults = { sent: 0, failed: 0, dropped: 0 };
  let active = 0;
  let closing = false;
  /** Past close: what is still in flight was counted as dropped already. */
  let closed = false;
  let idle: (() => void) | undefined;

  const drop = (message: MailMessage, why: string) => {
    results.dropped++;
    warn({ mail: true, to: message.to, reason: why }, 'mail dropped');
  };
  const deliver = async (message: MailMessage) => {
    try {
      // The envelope is set, not derived from the headers: RCPT TO is exactly the stored address.
      const envelope = { from, to: [{ name: '', address: message.to }] };
      await transport.sendMail({ from, to: message.to, envelope, subject: message.subject, text: message.text, html: message.html });
      if (!closed) results.sent++;
    } catch (error) {
      if (closed) return;
      results.failed++;
      warn({ mail: true, to: message.to, reason: safeReason(error, smtp) }, 'mail not sent');
    }
  };
  const pump = () => {
    while (active < concurrency && queue.length > 0) {
      const message = queue.shift() as MailMessage;
      active++;
      void deliver(message).finally(() => {
        active--;
        pump();
        if (active === 0 && queue.length === 0) idle?.();
      });
    }
  };

  return {
    available: true,
    send(message) {
      // A stored value from before addresses were checked (`<attacker@evil.example>nina`) is never mailed.
      if (!isEmailAddress(message.to)) return drop(message, 'the recipient is not a bare email address');
      if (closing) return drop(message, 'the service is shutting down');
      if (queue.length >= queueLimit) return drop(message, `${queueLimit} messages already wait for the mail server`);
      queue.push(message);
      // Even building the MIME message waits for the page to be answered.
      setImmediate(pump);
    },
    results: () => ({ ...results }),
    /**
     * At shutdown the messages already queued (a recovery code just asked for) are still sent,
     * for `flushMs` at most; what is left after that is dropped, counted and logged.
     */
    async close() {
      closing = true;
      pump();
      if (active > 0 || queue.length > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          new Promise<void>((resolve) => (idle = resolve)),
          new Promise<void>((resolve) => (timer = setTimeout(resolve, flushMs))),
        ]);
        clearTimeout(timer);
      }
      closed = true;
      const left = queue.splice(0).length + active;
      if (left > 0) {
        results.dropped += left;
        warn({ mail: true, messages: left }, `mail dropped: ${left} message(s) not sent within ${flushMs / 1000} s of shutting down`);
      }
      transport.close();
    },
  };
}
