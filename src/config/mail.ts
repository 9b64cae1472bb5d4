/**
 * Mail (IDP_SMTP_URL, IDP_MAIL_FROM, IDP_ALLOW_INSECURE_MAIL): the mail server, read from its URL
 * once here, and the sender. No message of this file quotes a value: the URL may hold a password.
 */
import { z } from 'zod';
import { isEmailAddress } from '../email-address.ts';
import { isLoopbackHost } from './values.ts';

/** The mail server as the URL names it; `password` is the URL's, percent-decoded. */
export interface SmtpServer {
  host: string;
  port: number;
  /** smtps://: TLS from the first byte (implicit TLS), else STARTTLS when the server offers it. */
  implicitTls: boolean;
  user: string | undefined;
  password: string | undefined;
}

/** `smtp://[user:password@]host[:port]` (port 587) or `smtps://…` (port 465); nothing else. */
export const smtpUrl = z
  .string()
  .optional()
  .transform((v, ctx): SmtpServer | undefined => {
    if (v === undefined || v.trim() === '') return undefined;
    const problem = (message: string) => {
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    };
    let url: URL;
    try {
      url = new URL(v.trim());
    } catch {
      return problem('must be a URL starting with smtp:// or smtps://');
    }
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return problem('must be a URL starting with smtp:// or smtps://');
    if (!url.hostname) return problem('must name the mail server (smtp://host:port)');
    if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
      return problem('must be smtp://[user:password@]host[:port], without a path, a query or a fragment');
    }
    const decode = (part: string) => {
      try {
        return part === '' ? undefined : decodeURIComponent(part);
      } catch {
        return problem('must percent-encode the user and password (% as %25)');
      }
    };
    const implicitTls = url.protocol === 'smtps:';
    const user = decode(url.username);
    const password = decode(url.password);
    if (password !== undefined && user === undefined) return problem('must name a user with the password (smtp://user:password@host)');
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : implicitTls ? 465 : 587, implicitTls, user, password };
  });

/** `Name <local@domain>`: a display name, then the one address (src/email-address.ts) in angle brackets. */
const NAMED_MAILBOX = /^[^<>\p{Cc}]*<([^<>]*)>$/u;

/** A bare address, or a name and a bare address: the sender is the operator's, a display name is welcome. */
function isMailbox(value: string): boolean {
  return isEmailAddress(value) || isEmailAddress(NAMED_MAILBOX.exec(value)?.[1] ?? '');
}

export const mailFrom = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const value = v?.trim();
    if (value === undefined || value === '') return undefined;
    if (isMailbox(value)) return value;
    ctx.addIssue({ code: 'custom', message: 'must be an email address, or a name and an address in angle brackets' });
    return z.NEVER;
  });

/** The mail part of the Config: the server (undefined: no mail server), the sender, and whether TLS is a must. */
export function mailOf(env: { smtp: SmtpServer | undefined; from: string | undefined; production: boolean; allowInsecure: boolean }, baseUrl: string) {
  const { smtp } = env;
  return Object.freeze({
    smtp: smtp && Object.freeze({
      ...smtp,
      // In production the codes a message carries must not cross the network readable: the
      // server must offer STARTTLS, unless it is on this machine or cleartext was allowed.
      requireTls: !smtp.implicitTls && env.production && !isLoopbackHost(smtp.host) && !env.allowInsecure,
    }),
    /** IDP_MAIL_FROM, else `no-reply@` the host of IDP_BASE_URL. */
    from: env.from ?? `no-reply@${new URL(baseUrl).hostname.replace(/^\[|\]$/g, '')}`,
  });
}

/** Where the mail server is, for the start line and idp doctor: never the user or password. */
export function describeSmtp(smtp: SmtpServer & { requireTls: boolean }): string {
  const host = smtp.host.includes(':') ? `[${smtp.host}]` : smtp.host;
  const tls = smtp.implicitTls ? 'TLS' : smtp.requireTls ? 'STARTTLS required' : 'STARTTLS when offered';
  return `smtp ${host}:${smtp.port} (${tls})`;
}

/** IDP_MAIL_FROM or IDP_ALLOW_INSECURE_MAIL without IDP_SMTP_URL: set by mistake, or the server forgotten. */
export function unusedMailSettings(env: Record<string, string | undefined>, smtpSet: boolean): string[] {
  if (smtpSet) return [];
  const set = ['IDP_MAIL_FROM', 'IDP_ALLOW_INSECURE_MAIL'].filter((name) => (env[name] ?? '').trim() !== '');
  return set.length === 0 ? [] : [`${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set but IDP_SMTP_URL is not: no mail is sent through a mail server`];
}
