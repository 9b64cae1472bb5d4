/**
 * New passwords, in the spirit of NIST SP 800-63B §3.1.1.2: long enough, not the user name,
 * not a commonly used password; no composition rules, no forced character classes.
 */
import { createRequire } from 'node:module';
import type * as CommonLanguage from '@zxcvbn-ts/language-common';

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 256;

let common: ReadonlySet<string> | undefined;

/**
 * The blocklist: the most used passwords of breach corpora, as maintained by zxcvbn-ts (its
 * common dictionary, about 49,000 lowercase entries), built into a set on first use. The
 * dictionary (about 8 MB in memory) is loaded then too, not at start: most instances never see
 * a new password.
 */
function commonPasswords(): ReadonlySet<string> {
  if (!common) {
    const { dictionary } = createRequire(import.meta.url)('@zxcvbn-ts/language-common') as typeof CommonLanguage;
    common = new Set(dictionary['passwords-common'].map((password) => password.toLowerCase()));
  }
  return common;
}

/** Why a new password is refused, as a sentence for the page; undefined when it is fine. */
export function newPasswordProblem(password: string, username: string): string | undefined {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) return `Use at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (length > MAX_PASSWORD_LENGTH) return `Use at most ${MAX_PASSWORD_LENGTH} characters.`;
  const lower = password.toLowerCase();
  if (lower.includes(username.trim().toLowerCase())) return 'Do not use your username in your password.';
  if (commonPasswords().has(lower) || /^(.)\1+$/.test(password)) return 'This password is too common. Choose another one.';
  return undefined;
}

/** The rules newPasswordProblem applies, as the password page lists them before the first try. */
export function passwordRules(): string[] {
  return [
    `be at least ${MIN_PASSWORD_LENGTH} characters long (at most ${MAX_PASSWORD_LENGTH})`,
    'not contain your username',
    'not be a common or easily guessed password',
    'not be your current password',
  ];
}
