/**
 * Clients served from memory. Every instance LISTENs for the `clients` trigger's notifications
 * and drops the changed entry, so an SQL edit reaches all instances within a second without
 * a restart. Unknown ids are cached too (an INSERT notifies as well), in a bounded map.
 */
import { createLoadingCache } from './loading-cache.ts';
import { isClientId, type ClientRecord, type ClientRepository, type DurableStore } from './types.ts';

export interface ClientsCache {
  get(clientId: string): Promise<ClientRecord | undefined>;
  /** Every CORS origin registered on any client (a preflight names no client). */
  allowedOrigins(): Promise<ReadonlySet<string>>;
  /** Stops listening. */
  close(): void;
}

const MAX_ENTRIES = 10_000;
const ALL = 'all';

export function createClientsCache(store: Pick<DurableStore, 'onChange'> & { clients: Pick<ClientRepository, 'get' | 'list'> }): ClientsCache {
  const entries = createLoadingCache<string, ClientRecord | undefined>({ maxEntries: MAX_ENTRIES });
  const origins = createLoadingCache<typeof ALL, ReadonlySet<string>>({ maxEntries: 1 });

  const unsubscribe = store.onChange((event) => {
    if (event.kind !== 'client' && event.kind !== 'clients') return;
    origins.invalidate();
    entries.invalidate(event.kind === 'client' ? event.clientId : undefined);
  });

  return {
    // An id the clients table cannot hold (a NUL, which PostgreSQL refuses, or 10 kB of noise)
    // is unknown without asking the database, and takes no room in the cache.
    get: async (clientId) => (isClientId(clientId) ? entries.get(clientId, () => store.clients.get(clientId)) : undefined),
    allowedOrigins: () =>
      origins.get(ALL, async () => new Set((await store.clients.list()).flatMap((c) => (c.enabled ? c.corsOrigins : [])))),
    close: unsubscribe,
  };
}
