/**
 * The pure half of the directory source: what the user typed -> the account name, the account
 * name -> a safe search filter, and a directory entry -> the account as this service keeps it.
 */
import { hasControlCharacters } from '../control-characters.ts';
import { emailAddressOrNull } from '../email-address.ts';

/** RFC 4515 §3: these five characters must be written as `\` and two hex digits in a filter value. */
const FILTER_SPECIALS: Record<string, string> = { '*': '\\2a', '(': '\\28', ')': '\\29', '\\': '\\5c', '\0': '\\00' };

/** Escapes a value for an LDAP filter, so that what a user types is a value and never filter syntax. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (c) => FILTER_SPECIALS[c] ?? c);
}

/** The configured filter with every `{username}` replaced by the escaped account name. */
export function userFilter(template: string, accountName: string): string {
  // split/join, not replace(): a `$&` in the value must stay literal.
  return template.split('{username}').join(escapeFilterValue(accountName));
}

/**
 * The account name in `user`, `DOMAIN\user` or `user@domain`, without the domain; undefined when
 * nothing usable is left.
 */
export function nameWithoutDomain(typed: string): string | undefined {
  let name = typed.trim();
  const backslash = name.indexOf('\\');
  if (backslash >= 0) name = name.slice(backslash + 1);
  const at = name.lastIndexOf('@');
  if (at >= 0) name = name.slice(0, at);
  name = name.trim();
  return name === '' || name.length > 256 ? undefined : name;
}

/**
 * The one name of the account `typed` signs in to, known before the directory is asked: the
 * account name (no domain), prepared the way a directory compares names (RFC 4518 §2: characters
 * mapped to nothing or to a space, case folded, NFKC, insignificant spaces), so that `alice`,
 * `ALICE`, `EXAMPLE\alice` and `alice@any`, which all find one entry, are one name. `sub` is made
 * of the same account name; the sign-in throttle counts against this one.
 */
export function canonicalAccountName(typed: string): string {
  return (nameWithoutDomain(typed) ?? typed)
    // RFC 4518 §2.2: mapped to nothing, or (tabs, line ends, separators) to a space.
    .replace(/\u00AD|\u1806|\u034F|\p{Variation_Selector}|\uFFFC|\u200B/gu, '')
    .replace(/[\t\n\v\f\r\u0085]/gu, ' ')
    .replace(/[\p{Cc}\p{Cf}]/gu, '')
    .replace(/\p{Z}/gu, ' ')
    // Case folding (upper then lower folds ß to ss, as RFC 3454 table B.2 does), then NFKC (§2.3).
    .normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC')
    // §2.6.1: leading and trailing spaces do not matter, and a run of spaces is one.
    .replace(/ +/g, ' ')
    .trim();
}

/** The value of the first RDN of a DN (`cn=Sales\2C EMEA,ou=groups,...` -> `Sales, EMEA`); a non-DN value is returned as is. */
export function groupNameOf(value: string): string {
  const rdn = /^\s*[A-Za-z][\w-]*\s*=\s*((?:\\.|[^,+\\])*)/.exec(value);
  if (rdn?.[1] === undefined) return value.trim();
  return unescapeDnValue(rdn[1].trim());
}

/** RFC 4514 §3: `\` followed by a special character, or by two hex digits of a UTF-8 byte. */
function unescapeDnValue(value: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value[i] ?? '';
    const hex = c === '\\' ? /^[0-9a-fA-F]{2}/.exec(value.slice(i + 1)) : null;
    if (hex) {
      bytes.push(parseInt(hex[0], 16));
      i += 2;
    } else if (c === '\\' && i + 1 < value.length) {
      bytes.push(...Buffer.from(value[++i] ?? ''));
    } else {
      bytes.push(...Buffer.from(c));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** An account as the directory describes it now. */
export interface DirectoryAccount {
  dn: string;
  /** The `sub`: the account name in lower case, without a domain. */
  subject: string;
  givenName: string | null;
  familyName: string | null;
  name: string | null;
  email: string | null;
  phoneNumber: string | null;
  roles: string[];
  /** Active Directory's userAccountControl ACCOUNTDISABLE bit (0x2). */
  disabled: boolean;
}

type EntryValue = string | string[] | Buffer | Buffer[];

/** Attributes read from a user entry (plus the configured role attribute). */
export const ACCOUNT_ATTRIBUTES = ['uid', 'sAMAccountName', 'givenName', 'sn', 'displayName', 'mail', 'telephoneNumber', 'userAccountControl'];

const ACCOUNTDISABLE = 0x2;

/** Reads a search entry; `accountName` is the name searched for (without its domain). */
export function readAccount(entry: { dn: string } & Record<string, EntryValue>, accountName: string, roleAttribute: string): DirectoryAccount {
  const values = new Map<string, string[]>();
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'dn') continue;
    const list = (Array.isArray(value) ? value : [value]).map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : v));
    values.set(key.toLowerCase(), list.filter((v) => v !== ''));
  }
  const all = (name: string) => values.get(name.toLowerCase()) ?? [];
  const first = (name: string) => all(name)[0] ?? null;
  // A profile value holding control characters or bidi overrides is dropped, as an upstream claim is.
  const plain = (name: string) => {
    const value = first(name);
    return value !== null && !hasControlCharacters(value) ? value : null;
  };
  // The directory's own spelling of the name that matched, so `sub` does not depend on what was typed.
  const names = [...all('sAMAccountName'), ...all('uid')];
  const matched = names.find((n) => n.toLowerCase() === accountName.toLowerCase()) ?? names[0] ?? accountName;
  const control = Number.parseInt(first('userAccountControl') ?? '0', 10);
  return {
    dn: entry.dn,
    subject: matched.toLowerCase(),
    givenName: plain('givenName'),
    familyName: plain('sn'),
    name: plain('displayName'),
    // Not a bare address (a display name, a list): dropped, as it would mail someone else (src/email-address.ts).
    email: emailAddressOrNull(first('mail')),
    phoneNumber: plain('telephoneNumber'),
    roles: [...new Set(all(roleAttribute).map(groupNameOf).filter((r) => r !== '' && !hasControlCharacters(r)))].sort(),
    disabled: Number.isFinite(control) && (control & ACCOUNTDISABLE) !== 0,
  };
}
