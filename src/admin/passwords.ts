/**
 * A local account's new password, from the password change page or from a seed file: either
 * way it ends every token the old password let anyone obtain (ASVS 3.3.3), through this one
 * function.
 */
import type { Clock } from '../clock.ts';
import type { PasswordChanged } from '../events/audit-events.ts';
import type { Audit } from '../events/record.ts';
import type { AccountChange } from '../factors/account-change.ts';
import { changeLocalPassword } from '../sources/local.ts';
import type { RevocationRecord } from '../store/records.ts';
import type { UserRepository } from '../store/types.ts';
import type { RevocationList } from '../tokens/revocation-list.ts';

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

export interface OwnPasswordDeps {
  change: AccountChange;
  clock: Clock;
  revocations: Pick<RevocationList, 'recorded'>;
}

/** What a user typed to set a new password, and where. */
export interface NewOwnPassword {
  userId: string;
  newPassword: string;
  confirm: string;
  via: PasswordChanged['via'];
}

/**
 * A user's own new password (the account page, a recovery, a change an administrator required):
 * the password, the revocation of every token of the user and the `password_changed` event in
 * one transaction; once committed, the revocations are checked here at once. Undefined when done,
 * else what is wrong with the password (nothing written).
 */
export async function changeOwnPassword(deps: OwnPasswordDeps, typed: NewOwnPassword, audit: Audit): Promise<string | undefined> {
  const { userId, via } = typed;
  const { problem, revoked } = await deps.change(userId, audit, async (tx) => {
    const revoked: RevocationRecord[] = [];
    const revokeUser = async (id: string, reason: string) => revoked.push(...(await tx.revocations.revokeUser(id, reason, new Date(deps.clock()))));
    const problem = await changePassword({ users: tx.users, revokeUser }, userId, typed.newPassword, typed.confirm);
    return { result: { problem, revoked }, events: problem === undefined ? [{ type: 'password_changed' as const, user_id: userId, via }] : [] };
  });
  if (revoked.length > 0) await deps.revocations.recorded(revoked);
  return problem;
}
