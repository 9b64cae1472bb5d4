/**
 * Local accounts: argon2id passwords in the users table. An unknown user costs the same argon2
 * verification as a known one, and gets the same answer as a wrong password.
 */
import type { UserRecord } from '../store/records.ts';
import type { UserRepository } from '../store/types.ts';
import { newPasswordProblem } from './password-policy.ts';
import { hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import type { PasswordSignInSource, SignInResult } from './types.ts';

/** What shows as nothing (Unicode Default_Ignorable_Code_Point: zero-width space and joiners, soft hyphen, variation selectors, …). */
const INVISIBLE = /\p{Default_Ignorable_Code_Point}/gu;

/** Whether a name holds a character that shows as nothing: `alice\u200b` would pass for `alice`. */
export function hasInvisibleCharacters(name: string): boolean {
  return new RegExp(INVISIBLE.source, 'u').test(name);
}

/**
 * The one form of a local account name, stored so and looked up so: compatibility-normalised
 * (NFKC, UAX #15: the fullwidth `ａlice` is `alice`), without what shows as nothing, trimmed and
 * without regard to case (lower(username)). So a look-alike spelling is the same account, or a
 * conflict when it is created, never a second account.
 */
export function localAccountName(typed: string): string {
  return typed.normalize('NFKC').replace(INVISIBLE, '').toLowerCase().normalize('NFKC').trim();
}

export function createLocalSource(users: Pick<UserRepository, 'getByUsername' | 'getById' | 'update'>): PasswordSignInSource {
  // Verified against when the user is unknown, so timing does not tell who exists.
  const decoy = hashPassword('decoy password that matches nothing typed');
  return {
    kind: 'local',
    async signIn(username, password): Promise<SignInResult> {
      const user = username.length <= 256 ? await users.getByUsername('local', localAccountName(username)) : undefined;
      const valid = await verifyPassword(user?.passwordHash ?? (await decoy), password);
      if (!user || !user.passwordHash || !valid) return { ok: false, reason: 'invalid_credentials' };
      // Said only to someone who knows the password: it tells nothing to a guesser.
      if (user.locked) return { ok: false, reason: 'locked' };
      // The password is at hand only now: the moment to move a hash to today's parameters.
      if (needsRehash(user.passwordHash)) await users.update(user.id, { passwordHash: await hashPassword(password) });
      return { ok: true, user, amr: ['pwd'] };
    },
    canonicalAccountName: localAccountName,
    // The users table is where local accounts live: the stored record is the current one.
    currentUser: async (user: UserRecord) => user,
  };
}

/**
 * Changes a local user's password after the policy allows it; returns the problem to show, or
 * undefined when done (the must-change flag is cleared with it).
 */
export async function changeLocalPassword(
  users: Pick<UserRepository, 'getById' | 'update'>,
  userId: string,
  newPassword: string,
  confirm: string,
): Promise<string | undefined> {
  const user = await users.getById(userId);
  if (!user) return 'This account no longer exists.';
  if (newPassword !== confirm) return 'The two passwords do not match.';
  const problem = newPasswordProblem(newPassword, user.username);
  if (problem) return problem;
  if (user.passwordHash && (await verifyPassword(user.passwordHash, newPassword))) return 'Choose a password you have not used here before.';
  await users.update(userId, { passwordHash: await hashPassword(newPassword), mustChangePassword: false });
  return undefined;
}
