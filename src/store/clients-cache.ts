/**
 * Clients served from memory. Every instance LISTENs for the `clients` trigger's notifications
 * and drops the changed entry, so an SQL edit reaches all instances within a second without
 * a restart. Unknown ids are cached too (an INSERT notifies as well), in a bounded map.
 */
import type { ClientRecord, ClientRepository, DurableStore } from './types.ts';

export interface ClientsCache {
  get(clientId: string): Promise<ClientRecord | undefined>;
  /** Every CORS origin registered on any client (a preflight names no client). */
  allowedOrigins(): Promise<ReadonlySet<string>>;
  /** Stops listening. */
  close(): void;
}

const MAX_ENTRIES = 10_000;

export function createClientsCache(store: Pick<DurableStore, 'onChange'> & { clients: Pick<ClientRepository, 'get' | 'list'> }): ClientsCache {
  const entries = new Map<string, Promise<ClientRecord | undefined>>();
  let origins: Promise<ReadonlySet<string>> | undefined;
  // Bumped on every invalidation: a load that started before it must not refill the cache.
  let generation = 0;

  const unsubscribe = store.onChange((event) => {
    generation += 1;
    if (event.kind !== 'keys') origins = undefined;
    if (event.kind === 'client') entries.delete(event.clientId);
    else if (event.kind === 'clients') entries.clear();
  });

  return {
    get(clientId) {
      const cached = entries.get(clientId);
      if (cached) return cached;
      const startedAt = generation;
      const loading = store.clients.get(clientId);
      if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
      entries.set(clientId, loading);
      loading.then(
        () => {
          if (generation !== startedAt && entries.get(clientId) === loading) entries.delete(clientId);
        },
        () => {
          if (entries.get(clientId) === loading) entries.delete(clientId);
        },
      );
      return loading;
    },
    allowedOrigins() {
      if (origins) return origins;
      const startedAt = generation;
      const loading = store.clients.list().then((clients) => new Set(clients.flatMap((c) => (c.enabled ? c.corsOrigins : []))));
      origins = loading;
      loading.then(
        () => {
          if (generation !== startedAt && origins === loading) origins = undefined;
        },
        () => {
          if (origins === loading) origins = undefined;
        },
      );
      return loading;
    },
    close: unsubscribe,
  };
}
