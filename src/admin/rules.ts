/**
 * The rules a client, user or API scope must follow, checked before anything is written. They
 * mirror the CHECK constraints of the migrations, so a bad value is refused with a clear line
 * instead of by the database later. The command line, the seed file and the API share them.
 */
import { hasControlCharacters } from '../control-characters.ts';
import { OIDC_SCOPES, SCOPE_TOKEN, SERVICE_SCOPES } from '../scopes.ts';
import { hasInvisibleCharacters, localAccountName } from '../sources/local.ts';
import { CONSOLE_CLIENT_ID, GRANT_TYPES, isClientId, type GrantType } from '../store/records.ts';

/** Each rule's explanation, as it follows a flag or a field path in an error line. */
export const RULE_MESSAGES = {
  clientId: 'must be 1 to 200 visible ASCII characters without spaces',
  reservedClientId: `is reserved: ${CONSOLE_CLIENT_ID} is the administration console's own`,
  grantType: `must be one of ${GRANT_TYPES.join(', ')}`,
  scopeToken: 'must be an RFC 6749 scope token (visible ASCII without spaces, quotes or backslashes)',
  redirectUri: 'must be an https URI, an http URI on a loopback address, or a private-use scheme with a period (com.example.app:/callback), without a fragment',
  origin: 'must be an origin scheme://host[:port] without a path',
  lifetime: 'must be a whole number of seconds from 1 to 2147483647',
  instant: 'must be an ISO 8601 date or a date-time with a time zone, such as 2027-01-31T00:00:00Z',
  base32: 'must be base32 (RFC 4648 alphabet A-Z and 2-7, at least 16 characters)',
  email: 'must be a bare email address such as nina@example.com, without a display name, brackets or spaces',
  notEmpty: 'must not be empty',
  plainText: 'must not contain control characters (such as ESC or a line break) or bidirectional overrides',
  // RFC 6749 §4.4: the client credentials grant is for confidential clients only.
  publicClientCredentials: 'a public client cannot use the client_credentials grant',
  invisible: 'must not contain characters that show as nothing (such as a zero-width space or joiner, or a soft hyphen)',
} as const;

/**
 * Scope names the service defines itself; an API scope may not take one of them.
 * OpenID Connect Core §5.4 (profile, email, phone), §11 (offline_access), and the service's own.
 */
export const RESERVED_SCOPES: readonly string[] = [...OIDC_SCOPES, ...SERVICE_SCOPES];

export { isClientId };

export function isGrantType(value: string): value is GrantType {
  return (GRANT_TYPES as readonly string[]).includes(value);
}

export function isScopeToken(value: string): boolean {
  return SCOPE_TOKEN.test(value);
}

/**
 * A redirect URI a client may register, the same rule as the database function
 * idp_is_redirect_uri (migration 2026-11-24-0001). RFC 6749 §3.1.2: an absolute URI without a
 * fragment. RFC 9700 §2.1 and RFC 8252 §7: `https`; `http` only on a loopback address (§7.3);
 * otherwise a private-use scheme, which is reverse-DNS and so contains a period (§7.1,
 * `com.example.app:/cb`). So `javascript:`, `data:`, `vbscript:`, `file:` and plain `http` to
 * another host are refused. For http(s), an authority without userinfo as well.
 */
export function isRedirectUri(value: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:[^#\s\p{Cc}]+$/u.test(value) || !URL.canParse(value)) return false;
  const scheme = value.slice(0, value.indexOf(':')).toLowerCase();
  if (scheme === 'https') return /^https:\/\/[^/?#@\s]+(\/[^#]*)?$/i.test(value);
  if (scheme === 'http') return /^http:\/\/(localhost|127\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}|\[::1\])(:[0-9]{1,5})?(\/[^#]*)?$/i.test(value);
  return scheme.includes('.');
}

/** An origin (RFC 6454) as browsers send it: scheme://host[:port], nothing after. */
export function isOrigin(value: string): boolean {
  return /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?$/.test(value) || /^https?:\/\/\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/.test(value);
}

/** The `access_token_lifetime` column is a positive PostgreSQL integer. */
export function isLifetime(value: number): boolean {
  return Number.isSafeInteger(value) && value > 0 && value <= 2_147_483_647;
}

/** Parses `2027-01-31` (midnight UTC) or a date-time with `Z` or an offset; undefined otherwise. */
export function parseInstant(value: string): Date | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.exec(value);
  if (!match) return undefined;
  const [, year, month, day] = match.map(Number);
  // Date.parse rolls 2027-02-30 over to March; a calendar date must exist as written.
  const calendar = new Date(Date.UTC(year ?? 0, (month ?? 0) - 1, day ?? 0));
  if (calendar.getUTCMonth() + 1 !== month || calendar.getUTCDate() !== day) return undefined;
  const time = Date.parse(match[4] ? value : `${value}T00:00:00Z`);
  return Number.isNaN(time) ? undefined : new Date(time);
}

/** RFC 4648 §6 base32, as authenticator apps take TOTP secrets; padding is optional. */
export function isBase32(value: string): boolean {
  if (!/^[A-Z2-7]{16,}=*$/.test(value)) return false;
  return !value.includes('=') || value.length % 8 === 0;
}

/** A bare email address, nothing more (src/email-address.ts): the rule of every way in. */
export { isEmailAddress } from '../email-address.ts';

/**
 * A name or profile field shown to administrators and relying parties: no terminal control
 * sequences, no bidi overrides that make one name look like another (src/control-characters.ts).
 */
export function isPlainText(value: string): boolean {
  return !hasControlCharacters(value);
}

/** A name chosen with a character that shows as nothing is refused (it would pass for another). */
export { hasInvisibleCharacters };

/**
 * The form a local username is stored in: the form sign-in looks it up by (NFKC, trimmed, lower
 * case), so `"ALICE "`, `ａlice` and `alice` are one account, and a second one by another
 * spelling is a conflict.
 */
export function canonicalUsername(typed: string): string {
  return localAccountName(typed);
}
