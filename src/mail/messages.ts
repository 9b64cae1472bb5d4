/**
 * The messages the service mails, each with a plain-text part and an HTML part. Values are
 * escaped in the HTML part; a message never holds a password or a token, only a one-time code
 * where the message exists to carry one.
 */
import type { MailMessage } from './mailer.ts';

/** What every message is signed with: `IDP_BRAND_NAME`, else the service's host. */
export interface MailBrand {
  name: string;
  /** `IDP_BRAND_COLOR` (`#rrggbb`), for the HTML part's accent. */
  color?: string | undefined;
}

/** A code of 8 digits to type (password recovery, email verification), and a link that fills it in. */
export interface CodeMessage {
  code: string;
  /** Opening it only fills the form in: it consumes nothing (mail scanners open links). */
  link: string;
  minutes: number;
}

/** The security changes a user is told of by mail. */
export type SecurityNotice = 'password_changed' | 'mfa_added' | 'mfa_removed' | 'recovery_code_used' | 'recovery_codes_generated';

const NOTICES: Record<SecurityNotice, { subject: string; body: string }> = {
  password_changed: { subject: 'Your password was changed', body: 'The password of your account was changed.' },
  mfa_added: { subject: 'A second factor was added', body: 'A second factor was added to your account.' },
  mfa_removed: { subject: 'A second factor was removed', body: 'A second factor was removed from your account.' },
  recovery_code_used: { subject: 'A recovery code was used', body: 'One of your recovery codes was used to sign in.' },
  recovery_codes_generated: { subject: 'New recovery codes were generated', body: 'New recovery codes were generated for your account; the old ones no longer work.' },
};

const UNEXPECTED = 'If this was not you, change your password at once and contact your administrator.';

export function passwordRecoveryMessage(to: string, brand: MailBrand, code: CodeMessage): MailMessage {
  return codeMessage(to, brand, `Your ${brand.name} password reset code`, 'Someone asked to reset the password of your account.', code,
    'If you did not ask for this, ignore this message: your password stays as it is.');
}

export function emailVerificationMessage(to: string, brand: MailBrand, code: CodeMessage): MailMessage {
  return codeMessage(to, brand, `Verify your email address for ${brand.name}`, 'Enter this code to verify your email address.', code,
    'If you did not ask for this, ignore this message.');
}

/** A security notice; `detail` adds one line (the second factor's kind, the codes left). */
export function securityNoticeMessage(to: string, brand: MailBrand, notice: SecurityNotice, when: Date, detail?: string): MailMessage {
  const { subject, body } = NOTICES[notice];
  const lines = [body, ...(detail ? [detail] : []), `When: ${when.toISOString()}`, UNEXPECTED];
  return message(to, brand, `${brand.name}: ${subject}`, lines);
}

function codeMessage(to: string, brand: MailBrand, subject: string, intro: string, code: CodeMessage, outro: string): MailMessage {
  const lines = [intro, `Your code: ${code.code}`, `It is good for ${code.minutes} minutes, once. Or open this link to enter it: ${code.link}`, outro];
  return message(to, brand, subject, lines, code.link);
}

/** `link`, where a line holds it, is a link in the HTML part (the text part shows it as it is). */
function message(to: string, brand: MailBrand, subject: string, lines: string[], link?: string): MailMessage {
  const text = [...lines, '', `— ${brand.name}`].join('\n\n');
  const accent = brand.color ?? '#1a56db';
  const anchor = link && `<a href="${escapeHtml(link)}" style="color:${escapeHtml(accent)}">${escapeHtml(link)}</a>`;
  const htmlLine = (line: string) => (link && anchor ? escapeHtml(line).replace(escapeHtml(link), anchor) : escapeHtml(line));
  const html = `<!doctype html><html><body style="font-family:sans-serif">${lines.map((l) => `<p>${htmlLine(l)}</p>`).join('')}`
    + `<p style="color:${escapeHtml(accent)}">— ${escapeHtml(brand.name)}</p></body></html>`;
  return { to, subject, text, html };
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
