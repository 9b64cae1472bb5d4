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
import type { DurableStore, UserRepository } from './types.ts';

const MAX_ENTRIES = 10_000;

export interface CachedUsers extends UserRepository {
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
    close: unsubscribe,
  };
}
