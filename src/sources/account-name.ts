/**
 * The account name a sign-in attempt is about, as audit lines name it (never the password): the
 * name the sign-in source throttles on (`canonicalAccountName`), so that every line about one account names
 * it as the throttle counts it, however it was typed. An upstream source types no names here.
 */
import type { SignInSource } from './types.ts';

/** Longer names are cut: a log line is no place for whatever a form field could carry. */
const MAX_LENGTH = 256;

export function canonicalAccountName(source: SignInSource, typed: string): string {
  const name = source.kind === 'oidc' ? typed.trim().toLowerCase() : source.canonicalAccountName(typed);
  return name.slice(0, MAX_LENGTH);
}
