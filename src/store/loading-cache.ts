/**
 * A bounded map of loads in flight or done, for values that live in the database and are
 * invalidated by its change feed. Concurrent gets of one key share one load; a load that
 * started before an invalidation never refills the cache with what it read; a failed load is
 * not kept. When full, the oldest entry goes.
 */
export interface LoadingCache<K, V> {
  get(key: K, load: () => Promise<V>): Promise<V>;
  /** Drops one key, or (without a key) everything. */
  invalidate(key?: K): void;
}

export function createLoadingCache<K, V>(options: { maxEntries: number; keep?: (value: V) => boolean }): LoadingCache<K, V> {
  const entries = new Map<K, Promise<V>>();
  // Bumped on every invalidation: a load that started before it must not stay cached.
  let generation = 0;
  const forget = (key: K, loading: Promise<V>) => {
    if (entries.get(key) === loading) entries.delete(key);
  };

  return {
    get(key, load) {
      const cached = entries.get(key);
      if (cached) return cached;
      const startedAt = generation;
      const loading = load();
      if (entries.size >= options.maxEntries) entries.delete(entries.keys().next().value as K);
      entries.set(key, loading);
      loading.then(
        (value) => {
          if (generation !== startedAt || (options.keep && !options.keep(value))) forget(key, loading);
        },
        () => forget(key, loading),
      );
      return loading;
    },
    invalidate(key) {
      generation += 1;
      if (key === undefined) entries.clear();
      else entries.delete(key);
    },
  };
}
