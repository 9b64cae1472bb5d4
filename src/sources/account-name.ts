/**
 * The account name a sign-in attempt is about, read the way the sign-in source reads what was
 * typed: what audit lines name (never the password). Local accounts are looked up without regard
 * to case; a directory also takes `DOMAIN\user` and `user@domain` for `user`. One place, so that
 * every line about one account names it the same way however it was typed.
 */
import { accountNameOf } from './ldap-entry.ts';
import type { SignInSource } from './types.ts';

/** Longer names are cut: a log line is no place for whatever a form field could carry. */
const MAX_LENGTH = 256;

export function canonicalAccountName(kind: SignInSource['kind'], typed: string): string {
  const name = (kind === 'ldap' ? accountNameOf(typed) : undefined) ?? typed.trim();
  return name.toLowerCase().slice(0, MAX_LENGTH);
}
