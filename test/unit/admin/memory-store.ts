/**
 * A minimal durable store in memory for the administrative rules' unit tests: clients, API
 * scopes, users with their second factors, the users' token revocations and the outbox, with
 * row versions from one counter, writes at a version, and transactions that keep nothing of a
 * write that throws (one at a time, as on PGlite). What the rules do not touch throws when used.
 * Not a backend: the store contract suite runs on the real ones.
 *
 * Where a rule of users lives in the database, this store does what the database does, so the
 * rules see the same answers: the unique index on (source, lower(username)) and the CHECK
 * constraints on local usernames (migrations 2026-11-22-0001, 2026-11-27-0001, 2026-11-29-0021)
 * throw an error with PostgreSQL's SQLSTATE and constraint name, the triggers that end a user's
 * tokens when they are locked, flagged or removed (2026-11-24-0004) record a revocation, and a
 * factor's change moves its user's version as the factor trigger does.
 */
import { hasInvisibleCharacters } from '../../../src/sources/local.ts';
import type { ApiScopeRecord, ClientRecord, FactorRecord, OutboxEvent, UserRecord, Versioned } from '../../../src/store/records.ts';
import type { ApiScopeRepository, ClientRepository, DurableStore, FactorRepository, OutboxRepository, RevocationRepository, UserRepository } from '../../../src/store/types.ts';

type UserRow = Versioned<Omit<UserRecord, 'factors'>>;

/** A user's tokens ended, by the service (a new password) or by a trigger (locked, flagged, removed). */
export interface UserRevocation {
  userId: string;
  reason: string;
}

interface Tables {
  clients: Map<string, Versioned<ClientRecord>>;
  scopes: Map<string, ApiScopeRecord>;
  users: Map<string, UserRow>;
  factors: FactorRecord[];
  revocations: UserRevocation[];
  events: OutboxEvent[];
}

export interface MemoryStore extends DurableStore {
  /** The events written to the outbox by committed transactions (and outside any). */
  readonly events: readonly OutboxEvent[];
  /** The users' token revocations committed (in order). */
  readonly userRevocations: readonly UserRevocation[];
}

const copy = (tables: Tables): Tables => ({
  clients: new Map(tables.clients), scopes: new Map(tables.scopes), users: new Map(tables.users),
  factors: [...tables.factors], revocations: [...tables.revocations], events: [...tables.events],
});

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

/** What PostgreSQL throws for a violated constraint (the fields src/admin/database-errors.ts reads). */
function violation(code: '23503' | '23505' | '23514', constraint: string): Error {
  return Object.assign(new Error(`violates ${constraint}`), { code, constraint });
}

/** The whitespace of the CHECK constraint users_local_username_canonical (migration 2026-11-27-0001). */
const EDGE_SPACE = /^[\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]|[\s\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]$/u;

/** The users table's CHECK constraints, as the migrations write them. */
function checkUserRow(row: Omit<UserRecord, 'factors'>): void {
  if (row.subject === '') throw violation('23514', 'users_subject_not_empty');
  if (row.username === '') throw violation('23514', 'users_username_not_empty');
  if (row.source !== 'local') return;
  if (row.username !== row.username.toLowerCase() || EDGE_SPACE.test(row.username)) throw violation('23514', 'users_local_username_canonical');
  if (hasInvisibleCharacters(row.username)) throw violation('23514', 'users_local_username_visible');
}

/** The unique constraints: the primary key, (source, subject), and the index on (source, lower(username)). */
function clashingConstraint(users: Iterable<UserRow>, row: Omit<UserRecord, 'factors'>, ownId?: string): string | undefined {
  for (const { record: other } of users) {
    if (other.id === ownId) continue;
    if (other.id === row.id) return 'users_pkey';
    if (other.source !== row.source) continue;
    if (other.subject === row.subject) return 'users_source_subject_unique';
    if (other.username.toLowerCase() === row.username.toLowerCase()) return 'users_source_username_unique';
  }
  return undefined;
}

/** The trigger users_revoke_tokens_on_flag: a flag newly set ends the user's tokens. */
function flagRevocation(before: UserRecord | Omit<UserRecord, 'factors'>, after: Omit<UserRecord, 'factors'>): string | undefined {
  if (after.locked && !before.locked) return 'user locked';
  if (after.mustChangePassword && !before.mustChangePassword) return 'password change required';
  if (after.mustEnrolMfa && !before.mustEnrolMfa) return 'second factor required';
  return undefined;
}

function usersOf(tables: () => Tables, next: () => number): UserRepository {
  const withFactors = (row: UserRow): Versioned<UserRecord> => ({
    record: { ...row.record, factors: tables().factors.filter((factor) => factor.userId === row.record.id) },
    version: row.version,
  });
  const rows = () => [...tables().users.values()];
  const byUsername = (source: string, username: string) => rows().find((row) => row.record.source === source && row.record.username.toLowerCase() === username.toLowerCase());
  const insert: UserRepository['insert'] = async (user) => {
    const now = new Date();
    const record = { ...user, roles: [...user.roles], createdAt: now, updatedAt: now };
    checkUserRow(record);
    // INSERT ... ON CONFLICT DO NOTHING: any unique violation writes no row.
    if (clashingConstraint(rows(), record)) return undefined;
    const row = { record, version: next() };
    tables().users.set(user.id, row);
    return withFactors(row);
  };
  const change: UserRepository['change'] = async (id, fields, ifVersion) => {
    const row = tables().users.get(id);
    if (!row || (ifVersion !== undefined && row.version !== ifVersion)) return undefined;
    const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
    const record = { ...row.record, ...defined, updatedAt: new Date() };
    checkUserRow(record);
    const clash = clashingConstraint(rows(), record, id);
    if (clash) throw violation('23505', clash);
    const written = { record, version: next() };
    tables().users.set(id, written);
    const reason = flagRevocation(row.record, record);
    if (reason) tables().revocations.push({ userId: id, reason });
    return withFactors(written);
  };
  return {
    getById: async (id) => {
      const row = tables().users.get(id);
      return row && withFactors(row).record;
    },
    getVersioned: async (id) => {
      const row = tables().users.get(id);
      return row && withFactors(row);
    },
    getByUsername: async (source, username) => {
      const row = byUsername(source, username);
      return row && withFactors(row).record;
    },
    getBySubject: async (source, subject) => {
      const row = rows().find((r) => r.record.source === source && r.record.subject === subject);
      return row && withFactors(row).record;
    },
    findByEmail: async (source, email) =>
      rows().filter((r) => r.record.source === source && r.record.email?.toLowerCase() === email.toLowerCase()).slice(0, 2).map((r) => withFactors(r).record),
    list: async () => rows().map((row) => withFactors(row).record).sort((a, b) => a.source.localeCompare(b.source) || a.username.localeCompare(b.username)),
    insert,
    change,
    update: async (id, fields, ifVersion) => (await change(id, fields, ifVersion)) !== undefined,
    remove: async (id, ifVersion) => {
      const row = tables().users.get(id);
      if (!row || (ifVersion !== undefined && row.version !== ifVersion)) return false;
      // The trigger users_revoke_tokens_on_delete, then ON DELETE CASCADE of the factors.
      tables().revocations.push({ userId: id, reason: 'user removed' });
      tables().factors = tables().factors.filter((factor) => factor.userId !== id);
      return tables().users.delete(id);
    },
    upsert: () => Promise.reject(new Error('the memory store has no users.upsert')),
    getManyByUsername: () => Promise.reject(new Error('the memory store has no users.getManyByUsername')),
    insertMany: () => Promise.reject(new Error('the memory store has no users.insertMany')),
    page: () => Promise.reject(new Error('the memory store has no users.page')),
    count: async () => tables().users.size,
    countMatching: () => Promise.reject(new Error('the memory store has no users.countMatching')),
    locked: () => Promise.reject(new Error('the memory store has no users.locked')),
  };
}

/** The factors the rules write (a user's TOTP factor); each change moves its user's version, as the factor trigger does. */
function factorsOf(tables: () => Tables, next: () => number): FactorRepository {
  const touchUser = (userId: string) => {
    const row = tables().users.get(userId);
    if (row) tables().users.set(userId, { ...row, version: next() });
  };
  return new Proxy({
    listForUser: async (userId: string) => tables().factors.filter((factor) => factor.userId === userId),
    add: async (factor: Parameters<FactorRepository['add']>[0]) => {
      if (!tables().users.has(factor.userId)) throw violation('23503', 'user_factors_user_id_fkey');
      if (factor.kind === 'totp' && tables().factors.some((f) => f.userId === factor.userId && f.kind === 'totp')) return undefined;
      const record: FactorRecord = { id: `factor-${next()}`, userId: factor.userId, kind: factor.kind, name: factor.name, secretSealed: factor.secretSealed, createdAt: new Date(), lastUsedAt: null };
      tables().factors.push(record);
      touchUser(factor.userId);
      return record;
    },
    remove: async (id: string) => {
      const factor = tables().factors.find((f) => f.id === id);
      if (!factor) return false;
      tables().factors = tables().factors.filter((f) => f.id !== id);
      touchUser(factor.userId);
      return true;
    },
  }, { get: (target, name) => (target as Record<string | symbol, unknown>)[name] ?? (() => Promise.reject(new Error(`the memory store has no factors.${String(name)}`))) }) as FactorRepository;
}

/** What the rules record of a user's tokens: the user and the reason (the tokens themselves are not kept here). */
function revocationsOf(tables: () => Tables): RevocationRepository {
  return new Proxy({
    revokeUser: async (userId: string, reason: string) => (tables().revocations.push({ userId, reason }), []),
  }, { get: (target, name) => (target as Record<string | symbol, unknown>)[name] ?? (() => Promise.reject(new Error(`the memory store has no revocations.${String(name)}`))) }) as unknown as RevocationRepository;
}

/** Whatever the rules must not reach. */
const untouched = new Proxy({}, { get: (_target, name) => () => Promise.reject(new Error(`the memory store has no ${String(name)}`)) });

export function memoryStore(): MemoryStore {
  let committed: Tables = { clients: new Map(), scopes: new Map(), users: new Map(), factors: [], revocations: [], events: [] };
  let version = 0;
  let queue: Promise<unknown> = Promise.resolve();
  const next = () => ++version;
  const over = (tables: () => Tables): Omit<DurableStore, 'transaction'> => ({
    kind: 'embedded',
    clients: clientsOf(tables, next),
    apiScopes: scopesOf(tables, next),
    outbox: outboxOf(tables),
    users: usersOf(tables, next),
    factors: factorsOf(tables, next),
    consents: untouched as DurableStore['consents'],
    signingKeys: untouched as DurableStore['signingKeys'],
    refreshTokens: untouched as DurableStore['refreshTokens'],
    accessTokens: untouched as DurableStore['accessTokens'],
    revocations: revocationsOf(tables),
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
    get userRevocations() {
      return committed.revocations;
    },
  };
}
