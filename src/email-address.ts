/**
 * An email address as the service stores it and mails to: a bare address `local@domain`
 * (RFC 5321 §4.1.2 Mailbox, RFC 6531 for letters beyond ASCII), never a display name, a group
 * or a list. Mail libraries read a header value generously: in `<attacker@evil.example>nina`
 * they find the address inside the brackets, so a value that is anything more than an address
 * would send a user's recovery code to someone else. Refused, then: `<>,;:"()`, `[]`, `\`,
 * whitespace, control and invisible characters, a quoted local part, an address literal.
 */

/** RFC 5322 §3.2.3 atext, plus letters, marks and digits beyond ASCII (RFC 6532 §3.2). */
const ATOM = String.raw`[A-Za-z0-9!#$%&'*+/=?^_\x60{|}~\-\p{L}\p{M}\p{N}]+`;
/** A domain name's label: letters and digits, hyphens inside (RFC 1035 §2.3.1, IDNA labels). */
const LABEL = String.raw`[\p{L}\p{M}\p{N}](?:[\p{L}\p{M}\p{N}-]*[\p{L}\p{M}\p{N}])?`;
const ADDRESS = new RegExp(`^(${ATOM}(?:\\.${ATOM})*)@(${LABEL}(?:\\.${LABEL})*)$`, 'u');

/** RFC 5321 §4.5.3.1: 64 octets of local part, 254 of path (without the angle brackets). */
const MAX_LOCAL = 64;
const MAX_ADDRESS = 254;

/** Whether `value` is a bare email address (see above); the one rule every way in applies. */
export function isEmailAddress(value: string): boolean {
  const match = ADDRESS.exec(value);
  if (!match) return false;
  const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
  return bytes(match[1] ?? '') <= MAX_LOCAL && bytes(value) <= MAX_ADDRESS;
}

/** A directory attribute or upstream claim as stored: a bare address, or nothing. */
export function emailAddressOrNull(value: unknown): string | null {
  return typeof value === 'string' && isEmailAddress(value) ? value : null;
}
