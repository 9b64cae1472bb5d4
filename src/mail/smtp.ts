/**
 * The mail server through nodemailer: one transport made the same way for sending and for
 * `idp doctor`'s check, with timeouts that let a server that hangs fail within a minute.
 */
import type { ConnectionOptions } from 'node:tls';
import { createTransport } from 'nodemailer';
import type { MailConfig } from '../config.ts';

export type SmtpSettings = NonNullable<MailConfig['smtp']>;

/** Extra TLS settings (the CA of a test's self-signed certificate); the system's CAs otherwise. */
export type SmtpTls = Pick<ConnectionOptions, 'ca'>;

export function smtpTransport(smtp: SmtpSettings, tls: SmtpTls = {}) {
  return createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.implicitTls,
    // In production (off loopback) a server without STARTTLS is refused, never used in cleartext.
    requireTLS: smtp.requireTls,
    ...(smtp.user !== undefined ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    // Nothing of the conversation (it holds the message and the credentials) goes to a log.
    logger: false,
    debug: false,
    disableFileAccess: true,
    disableUrlAccess: true,
    tls: { ...tls, minVersion: 'TLSv1.2' },
  });
}

/** Connects, greets, upgrades to TLS and signs in as the service does; rejects with why not. */
export async function verifyMailServer(smtp: SmtpSettings, tls: SmtpTls = {}): Promise<void> {
  const transport = smtpTransport(smtp, tls);
  try {
    await transport.verify();
  } catch (error) {
    throw new Error(safeReason(error, smtp), { cause: error });
  } finally {
    transport.close();
  }
}

/**
 * Why a conversation failed, in one line, with the URL's password and its AUTH encodings
 * struck out should a server ever echo them.
 */
export function safeReason(error: unknown, smtp: SmtpSettings): string {
  const e = error as { message?: unknown; code?: unknown; responseCode?: unknown };
  const first = (typeof e.message === 'string' ? e.message : String(error)).split('\n')[0]?.trim() ?? '';
  const code = typeof e.code === 'string' && !first.includes(e.code) ? ` (${e.code})` : '';
  let reason = `${first || 'failed'}${code}`;
  for (const secret of secretsOf(smtp)) reason = reason.split(secret).join('***');
  return reason;
}

function secretsOf(smtp: SmtpSettings): string[] {
  if (!smtp.password) return [];
  const user = smtp.user ?? '';
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  return [smtp.password, encodeURIComponent(smtp.password), b64(smtp.password), b64(`\0${user}\0${smtp.password}`)].filter((s) => s.length >= 3);
}
