/**
 * A minimal durable store in memory for the administrative rules' unit tests: clients, API
 * scopes and the outbox, with row versions from one counter, writes at a version, and
 * transactions that keep nothing of a write that throws (one at a time, as on PGlite). What the
 * rules do not touch throws when used. Not a backend: the store contract suite runs on the real ones.
 */
import type { ApiScopeRecord, ClientRecord, OutboxEvent, Versioned } from '../../../src/store/records.ts';
import type { ApiScopeRepository, ClientRepository, DurableStore, OutboxRepository } from '../../../src/store/types.ts';

interface Tables {
  clients: Map<string, Versioned<ClientRecord>>;
  scopes: Map<string, ApiScopeRecord>;
  events: OutboxEvent[];
}

export interface MemoryStore extends DurableStore {
  /** The events written to the outbox by committed transactions (and outside any). */
  readonly events: readonly OutboxEvent[];
}

const copy = (tables: Tables): Tables => ({ clients: new Map(tables.clients), scopes: new Map(tables.scopes), events: [...tables.events] });

function clientsOf(tables: () => Tables, next: () => number): ClientRepository {
  const at = (id: string, ifVersion?: number) => {
    const row = tables().clients.get(id);
    return row && (ifVersion === undefined || row.version === ifVersion) ? row : undefined;
  };
  const write = (record: ClientRecord): Versioned<ClientRecord> => {
    const row = { record, version: next() };
    tables().clients.set(record.clientId, row);
    return row;
  };
  const change: ClientRepository['change'] = async (id, fields, ifVersion) => {
    const row = at(id, ifVersion);
    return row && write({ ...row.record, ...fields });
  };
  return {
    get: async (id) => tables().clients.get(id)?.record,
    getVersioned: async (id) => tables().clients.get(id),
    list: async () => [...tables().clients.values()].map((row) => row.record).sort((a, b) => a.clientId.localeCompare(b.clientId)),
    upsert: async (client) => (write(client), 'created'),
    insert: async (client) => (tables().clients.has(client.clientId) ? undefined : write(client)),
    change,
    update: async (id, fields, ifVersion) => (await change(id, fields, ifVersion)) !== undefined,
    remove: async (id, ifVersion) => at(id, ifVersion) !== undefined && tables().clients.delete(id),
    page: async () => [...tables().clients.values()].map((row) => row.record),
    count: async () => tables().clients.size,
  };
}

function scopesOf(tables: () => Tables, next: () => number): ApiScopeRepository {
  const insert: ApiScopeRepository['insert'] = async (name) => {
    if (tables().scopes.has(name)) return undefined;
    const scope = { name, createdAt: new Date(0), version: next() };
    tables().scopes.set(name, scope);
    return scope;
  };
  return {
    list: async () => [...tables().scopes.keys()].sort(),
    get: async (name) => tables().scopes.get(name),
    page: async () => [...tables().scopes.values()],
    insert,
    add: async (name) => (await insert(name)) !== undefined,
    remove: async (name, ifVersion) => {
      const scope = tables().scopes.get(name);
      return scope !== undefined && (ifVersion === undefined || scope.version === ifVersion) && tables().scopes.delete(name);
    },
  };
}

function outboxOf(tables: () => Tables): OutboxRepository {
  return {
    append: async (event) => (tables().events.push(event), 1),
    appendMany: async (events) => (tables().events.push(...events), { deliveries: events.length, claimed: [] }),
  };
}

/** Whatever the rules must not reach. */
const untouched = new Proxy({}, { get: (_target, name) => () => Promise.reject(new Error(`the memory store has no ${String(name)}`)) });

export function memoryStore(): MemoryStore {
  let committed: Tables = { clients: new Map(), scopes: new Map(), events: [] };
  let version = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const next = () => ++version;
  const over = (tables: () => Tables): Omit<DurableStore, 'transaction'> => ({
    kind: 'embedded',
    clients: clientsOf(tables, next),
    apiScopes: scopesOf(tables, next),
    outbox: outboxOf(tables),
    users: untouched as DurableStore['users'],
    factors: untouched as DurableStore['factors'],
    consents: untouched as DurableStore['consents'],
    signingKeys: untouched as DurableStore['signingKeys'],
    refreshTokens: untouched as DurableStore['refreshTokens'],
    accessTokens: untouched as DurableStore['accessTokens'],
    revocations: untouched as DurableStore['revocations'],
    secretCheck: untouched as DurableStore['secretCheck'],
    webhooks: untouched as DurableStore['webhooks'],
    auditLog: untouched as DurableStore['auditLog'],
    migrate: async () => [],
    onChange: () => () => false,
    changeFeed: () => 'listening',
    ping: async () => {},
    serverTime: async () => new Date(),
    close: async () => {},
  });
  // One transaction at a time on a copy of the tables, which replaces them on commit.
  const transaction: DurableStore['transaction'] = (fn) => {
    const run = queue.then(async () => {
      const draft = copy(committed);
      const result = await fn({ ...over(() => draft), transaction: () => Promise.reject(new Error('nested transaction')) });
      committed = draft;
      return result;
    });
    queue = run.catch(() => {});
    return run;
  };
  return {
    ...over(() => committed),
    transaction,
    get events() {
      return committed.events;
    },
  };
}
