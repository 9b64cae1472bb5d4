/**
 * Clients served from memory. Every instance LISTENs for the `clients` trigger's notifications
 * and drops the changed entry, so an SQL edit reaches all instances within a second without
 * a restart. Unknown ids are cached too (an INSERT notifies as well), in a bounded map.
 *
 * A client is served with the scopes it may be granted now: its standard scopes, and those of
 * its API scopes that the `api_scopes` table still lists (read once, dropped when the table's
 * trigger notifies). Removing an API scope therefore stops it from being granted at once, to
 * clients that still list it in their `scopes` column too.
 */
import { isStandardScope } from '../scopes.ts';
import { createLoadingCache } from './loading-cache.ts';
import { isClientId, type ClientRecord } from './records.ts';
import type { ApiScopeRepository, ClientRepository, DurableStore } from './types.ts';

export interface ClientsCache {
  get(clientId: string): Promise<ClientRecord | undefined>;
  /** Every CORS origin registered on any client (a preflight names no client). */
  allowedOrigins(): Promise<ReadonlySet<string>>;
  /** Stops listening. */
  close(): void;
}

const MAX_ENTRIES = 10_000;
const ALL = 'all';

type Source = Pick<DurableStore, 'onChange'> & { clients: Pick<ClientRepository, 'get' | 'list'>; apiScopes: Pick<ApiScopeRepository, 'list'> };

export function createClientsCache(store: Source): ClientsCache {
  const entries = createLoadingCache<string, ClientRecord | undefined>({ maxEntries: MAX_ENTRIES });
  const origins = createLoadingCache<typeof ALL, ReadonlySet<string>>({ maxEntries: 1 });
  const apiScopes = createLoadingCache<typeof ALL, ReadonlySet<string>>({ maxEntries: 1 });

  const unsubscribe = store.onChange((event) => {
    if (event.kind === 'apiScopes') {
      apiScopes.invalidate();
      entries.invalidate();
      return;
    }
    if (event.kind !== 'client' && event.kind !== 'clients') return;
    origins.invalidate();
    entries.invalidate(event.kind === 'client' ? event.clientId : undefined);
  });

  const load = async (clientId: string): Promise<ClientRecord | undefined> => {
    const [client, known] = await Promise.all([
      store.clients.get(clientId),
      apiScopes.get(ALL, async () => new Set(await store.apiScopes.list())),
    ]);
    return client && { ...client, scopes: client.scopes.filter((s) => isStandardScope(s) || known.has(s)) };
  };

  return {
    // An id the clients table cannot hold (a NUL, which PostgreSQL refuses, or 10 kB of noise)
    // is unknown without asking the database, and takes no room in the cache.
    get: async (clientId) => (isClientId(clientId) ? entries.get(clientId, () => load(clientId)) : undefined),
    allowedOrigins: () =>
      origins.get(ALL, async () => new Set((await store.clients.list()).flatMap((c) => (c.enabled ? c.corsOrigins : [])))),
    close: unsubscribe,
  };
}
