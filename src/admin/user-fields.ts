/**
 * What a local account's fields must be, wherever it comes from (`idp users add`, a seed file,
 * the API): a username in its canonical form, profile fields as plain text, a password the
 * policy allows, and the defaults of a new account.
 */
import { escapeControlCharacters } from '../control-characters.ts';
import { passwordHashProblem } from '../sources/password-hashes.ts';
import { newPasswordProblem } from '../sources/password-policy.ts';
import type { UserInput } from '../store/records.ts';
import { AdminError, formatPath, type FieldProblem } from './errors.ts';
import { RULE_MESSAGES, hasInvisibleCharacters, isEmailAddress, isPlainText } from './rules.ts';

/** A new account is enabled, has no roles and no second factor, and is asked for nothing. */
export const NEW_USER_DEFAULTS = {
  roles: [] as string[],
  locked: false,
  mustChangePassword: false,
  mustEnrolMfa: false,
} satisfies Partial<UserInput>;

/** The profile as given, by the wire names (OpenID Connect claims) the problems are named by. */
export interface UserProfileFields {
  username: string;
  given_name?: string | null | undefined;
  family_name?: string | null | undefined;
  name?: string | null | undefined;
  email?: string | null | undefined;
  phone_number?: string | null | undefined;
  roles?: readonly string[] | undefined;
}

const TEXT_FIELDS = ['username', 'given_name', 'family_name', 'name', 'email', 'phone_number'] as const;

/** Every wrong field of a profile: empty username, control characters, a malformed email. */
export function profileProblems(fields: UserProfileFields): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (fields.username.trim() === '') problems.push({ path: ['username'], message: RULE_MESSAGES.notEmpty });
  else if (isPlainText(fields.username) && hasInvisibleCharacters(fields.username)) problems.push({ path: ['username'], message: RULE_MESSAGES.invisible });
  for (const field of TEXT_FIELDS) {
    const value = fields[field];
    if (typeof value === 'string' && !isPlainText(value)) problems.push({ path: [field], message: RULE_MESSAGES.plainText });
  }
  if (typeof fields.email === 'string' && isPlainText(fields.email) && !isEmailAddress(fields.email)) problems.push({ path: ['email'], message: RULE_MESSAGES.email });
  (fields.roles ?? []).forEach((role, i) => {
    if (role === '') problems.push({ path: ['roles', i], message: RULE_MESSAGES.notEmpty });
    else if (!isPlainText(role)) problems.push({ path: ['roles', i], message: RULE_MESSAGES.plainText });
  });
  return problems;
}

/** Refuses a profile with wrong fields: the first named in the error's line, every one in its problems. */
export function refuseProfileProblems(username: string, problems: readonly FieldProblem[]): void {
  const first = problems[0];
  if (first) throw new AdminError('invalid', `user ${quoted(username)}: ${formatPath(first.path)} ${first.message}`, problems);
}

/** The rules of the password change page (NIST SP 800-63B §3.1.1.2), for every way in. */
export function passwordProblem(password: string, username: string): string | undefined {
  return newPasswordProblem(password, username);
}

/** Refuses a password those rules refuse. */
export function refusePassword(password: string, username: string): void {
  const problem = passwordProblem(password, username);
  if (problem !== undefined) throw new AdminError('invalid', `password of ${username} refused: ${problem}`, [{ path: ['password'], message: problem }]);
}

/**
 * A new account's password comes as the password itself or as a hash made elsewhere
 * (`password_hash`, src/sources/password-hashes.ts): one of the two, never both. The problem
 * with what was given, by field, or undefined.
 */
export function passwordOrHashProblem(given: { password?: string | undefined; password_hash?: string | undefined }, username: string, isNew: boolean): FieldProblem | undefined {
  const { password, password_hash: hash } = given;
  if (password !== undefined && hash !== undefined) return { path: ['password_hash'], message: 'give password or password_hash, not both' };
  if (hash !== undefined) {
    const problem = passwordHashProblem(hash);
    return problem === undefined ? undefined : { path: ['password_hash'], message: problem };
  }
  if (password !== undefined) {
    const problem = passwordProblem(password, username);
    return problem === undefined ? undefined : { path: ['password'], message: problem };
  }
  return isNew ? { path: ['password'], message: 'required for a new user (or password_hash)' } : undefined;
}

/** Refuses what passwordOrHashProblem finds. */
export function refusePasswordOrHash(given: { password?: string | undefined; password_hash?: string | undefined }, username: string, isNew: boolean): void {
  const problem = passwordOrHashProblem(given, username, isNew);
  if (problem) throw new AdminError('invalid', `${problem.path.join('.')} of ${username} refused: ${problem.message}`, [problem]);
}

/** A value as an error line may quote it: control characters escaped, never sent to a terminal. */
export function quoted(value: string): string {
  return `"${escapeControlCharacters(value)}"`;
}
