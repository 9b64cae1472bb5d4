/**
 * Users by id served from memory: userinfo, the code exchange and every refresh read the user,
 * and a database round trip is most of what those requests cost besides the signature. Every
 * instance drops an entry when the `users` trigger announces a change (whoever made it: the
 * service, `idp users`, SQL), and this instance also drops it as soon as it writes the user
 * itself, so that its own next read never waits on the notification. Lookups by name (sign-in)
 * always go to the database.
 */
import { createLoadingCache } from './loading-cache.ts';
import type { UserRecord } from './records.ts';
import type { DurableStore, FactorRepository, UserRepository } from './types.ts';

const MAX_ENTRIES = 10_000;

export interface CachedUsers extends UserRepository {
  /** Drops the user's entry: this instance just changed what is read with the user (their factors). */
  forget(id: string): void;
  /** Stops listening. */
  close(): void;
}

export function createCachedUsers(store: Pick<DurableStore, 'onChange' | 'users'>): CachedUsers {
  const { users } = store;
  // Only users that exist are kept: an id is never reused, but a miss is not worth keeping.
  const entries = createLoadingCache<string, UserRecord | undefined>({ maxEntries: MAX_ENTRIES, keep: (user) => user !== undefined });
  const unsubscribe = store.onChange((event) => {
    if (event.kind === 'user') entries.invalidate(event.userId);
    else if (event.kind === 'users') entries.invalidate();
  });
  /** Runs a write, then drops what it may have changed (after: a read meanwhile may have refilled it). */
  const writing = async <T>(write: Promise<T>, id?: string): Promise<T> => {
    try {
      return await write;
    } finally {
      entries.invalidate(id);
    }
  };

  return {
    ...users,
    getById: (id) => entries.get(id, () => users.getById(id)),
    upsert: (user) => writing(users.upsert(user)),
    insert: (user) => writing(users.insert(user)),
    update: (id, change, ifVersion) => writing(users.update(id, change, ifVersion), id),
    change: (id, change, ifVersion) => writing(users.change(id, change, ifVersion), id),
    remove: (id) => writing(users.remove(id), id),
    forget: (id) => entries.invalidate(id),
    close: unsubscribe,
  };
}

/**
 * The factors, whose additions and removals drop the user's entry on this instance at once, as a
 * write of the user does: the sign-in that just enrolled a factor, and the code exchange after
 * it, read the user with it (the trigger on `user_factors` tells the other instances).
 */
export function factorsForgettingUsers(factors: FactorRepository, users: Pick<CachedUsers, 'forget'>): FactorRepository {
  const forgetting = async <T>(userId: string, write: Promise<T>): Promise<T> => {
    try {
      return await write;
    } finally {
      users.forget(userId);
    }
  };
  return {
    ...factors,
    add: (factor) => forgetting(factor.userId, factors.add(factor)),
    removeUnlessLast: (userId, id, standing) => forgetting(userId, factors.removeUnlessLast(userId, id, standing)),
    replaceRecoveryCodes: (userId, hashes, name) => forgetting(userId, factors.replaceRecoveryCodes(userId, hashes, name)),
    removeAllForUser: (userId) => forgetting(userId, factors.removeAllForUser(userId)),
  };
}
