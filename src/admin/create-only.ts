/**
 * Adding never replaces: the store's writes are upserts (the seed file needs them), so an
 * operation that adds checks, in the same transaction, that the row is not there yet. Without
 * it, adding a client or user by a name already taken would silently reset its secret or password.
 */
import type { DurableStore } from '../store/types.ts';
import { refuseConstraintViolations } from './database-errors.ts';
import { AdminError } from './errors.ts';

export async function createOnly(
  durable: DurableStore,
  subject: string,
  exists: (tx: DurableStore) => Promise<unknown>,
  write: (tx: DurableStore) => Promise<unknown>,
): Promise<void> {
  await refuseConstraintViolations(subject, () =>
    durable.transaction(async (tx) => {
      if (await exists(tx)) throw new AdminError('conflict', `${subject} already exists`);
      await write(tx);
    }),
  );
}
