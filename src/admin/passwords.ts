/**
 * A local account's new password, from the password change page or from a seed file: either
 * way it ends every token the old password let anyone obtain (ASVS 3.3.3), through this one
 * function.
 */
import { changeLocalPassword } from '../sources/local.ts';
import type { UserRepository } from '../store/types.ts';

/** Whatever records a user's tokens as revoked: the revocation list, or the store in a transaction. */
export type RevokeUser = (userId: string, reason: string) => Promise<unknown>;

export async function revokeAfterPasswordChange(revokeUser: RevokeUser, userId: string): Promise<void> {
  await revokeUser(userId, 'password changed');
}

/** The password change page's change: undefined when done, else what is wrong with the password. */
export async function changePassword(
  deps: { users: Pick<UserRepository, 'getById' | 'update'>; revokeUser: RevokeUser },
  userId: string,
  newPassword: string,
  confirm: string,
): Promise<string | undefined> {
  const problem = await changeLocalPassword(deps.users, userId, newPassword, confirm);
  if (problem === undefined) await revokeAfterPasswordChange(deps.revokeUser, userId);
  return problem;
}
