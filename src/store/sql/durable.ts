/** The durable store: repositories over one Kysely connection, migrations and the change feed. */
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { migrations } from '../../../migrations/index.ts';
import type { ChangeEvent, DurableStore } from '../types.ts';
import { sqlClients } from './clients.ts';
import { embeddedSocketUrl, type ChangeFeed, type Connection } from './connection.ts';
import { connectEmbedded } from './embedded.ts';
import { IDLE_TRANSACTION_MS } from './embedded-messages.ts';
import { connectPostgres, lockMigrations } from './postgres.ts';
import type { Db } from './tables.ts';
import { sqlAccessTokens } from './access-tokens.ts';
import { sqlRefreshTokens } from './refresh-tokens.ts';
import { sqlRevocations } from './revocations.ts';
import { sqlApiScopes, sqlConsents } from './scopes-consents.ts';
import { sqlSecretCheck } from './secret-check.ts';
import { sqlSigningKeys } from './signing-keys.ts';
import { sqlFactors } from './factors.ts';
import { sqlUsers } from './users.ts';
import { sqlOutbox, type AuditsType } from './outbox.ts';
import { sqlAuditLog } from './audit-log.ts';
import { sqlWebhookDeliveries } from './webhook-deliveries.ts';
import { sqlWebhookEndpoints } from './webhook-endpoints.ts';

export interface DurableStoreOptions {
  /** `postgres://…`; when absent, the embedded PGlite database in `dataDir` (in memory if undefined). */
  databaseUrl?: string | undefined;
  dataDir?: string | undefined;
  onError?: (error: Error) => void;
  /** PostgreSQL only: connections kept at most (default 20). */
  poolSize?: number | undefined;
  /** PostgreSQL only: where LISTEN runs (default databaseUrl); see connectPostgres. */
  listenUrl?: string | undefined;
  /** PostgreSQL only: named prepared statements (default true). */
  preparedStatements?: boolean | undefined;
  /** Which event types the outbox keeps in the audit log, whether subscribed or not (default: every type). */
  audits?: AuditsType | undefined;
}

const AUDIT_EVERY_TYPE: AuditsType = () => true;

export async function openDurableStore(options: DurableStoreOptions): Promise<DurableStore> {
  const connection = options.databaseUrl
    ? connectPostgres({ ...options, databaseUrl: options.databaseUrl })
    : await connectEmbedded(options.dataDir);
  return createStore(connection, options.audits ?? AUDIT_EVERY_TYPE);
}

/**
 * The embedded database that the development server serves on `socketPath` (embedded-socket.ts),
 * reached over the PostgreSQL protocol as any client would; undefined when no one serves it there.
 */
export async function openSharedDurableStore(socketPath: string, audits: AuditsType = AUDIT_EVERY_TYPE): Promise<DurableStore | undefined> {
  const connection = connectPostgres({
    databaseUrl: embeddedSocketUrl(socketPath),
    // One connection, as PGlite has one session; a statement may wait for another client's
    // transaction, which the server ends after IDLE_TRANSACTION_MS of silence.
    poolSize: 1,
    preparedStatements: false,
    timeouts: { connectMs: 2 * IDLE_TRANSACTION_MS, queryMs: 3 * IDLE_TRANSACTION_MS },
  });
  // The server, which has the change feed, sees this connection's changes: no LISTEN here.
  const store = await createStore({ ...connection, kind: 'embedded', listen: async () => ({ state: () => 'listening', stop: async () => {} }) }, audits);
  try {
    await store.ping();
    return store;
  } catch (error) {
    await store.close().catch(() => {});
    if (isNotServed(error)) return undefined;
    throw error;
  }
}

/** No socket there, or no process behind it (one killed without removing it). */
function isNotServed(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ECONNREFUSED';
}

async function createStore(connection: Connection, audits: AuditsType): Promise<DurableStore> {
  const listeners = new Set<(event: ChangeEvent) => void>();
  const emit = (event: ChangeEvent) => {
    for (const listener of listeners) listener(event);
  };
  // LISTEN from the start rather than on the first onChange(): LISTEN takes a round trip on
  // its own connection, and a change committed meanwhile would never reach that listener.
  let feed: ChangeFeed;
  try {
    feed = await connection.listen(emit);
  } catch (error) {
    await connection.close().catch(() => {});
    throw error;
  }

  const store: DurableStore = {
    ...repositories(connection.kind, connection.db, audits),
    async migrate() {
      const migrate = (db: typeof connection.db) => new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateToLatest();
      // On PostgreSQL in one transaction of ours, locked first (the migrator creates its own
      // tables before it locks): the lock is transaction-level (postgres.ts), so a transaction
      // pooler cannot strand it on a pooled connection, and concurrent starts wait in turn.
      // A failed migration throws out of the transaction, so that nothing of the run is kept.
      const { error, results } = connection.kind === 'postgres'
        ? await connection.db.transaction().execute(async (trx) => {
          await lockMigrations(trx);
          const result = await migrate(trx);
          if (result.error) throw result.error instanceof Error ? result.error : new Error(String(result.error));
          return result;
        })
        : await migrate(connection.db);
      if (error) throw error instanceof Error ? error : new Error(String(error));
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    ...(connection.poolStats ? { poolStats: connection.poolStats } : {}),
    ...(connection.share ? { share: connection.share } : {}),
    changeFeed: () => feed.state(),
    async close() {
      listeners.clear();
      await feed.stop().catch(() => {});
      await connection.close();
    },
  };
  return store;
}

/** Repositories over a database handle: the connection itself, or a transaction. */
function repositories(kind: DurableStore['kind'], db: Db, audits: AuditsType): Omit<DurableStore, 'migrate' | 'onChange' | 'changeFeed' | 'close'> {
  return {
    kind,
    clients: sqlClients(db),
    users: sqlUsers(db),
    factors: sqlFactors(db),
    apiScopes: sqlApiScopes(db),
    consents: sqlConsents(db),
    signingKeys: sqlSigningKeys(db, audits),
    refreshTokens: sqlRefreshTokens(db),
    accessTokens: sqlAccessTokens(db),
    revocations: sqlRevocations(db),
    secretCheck: sqlSecretCheck(db),
    outbox: sqlOutbox(db, audits),
    auditLog: sqlAuditLog(db),
    webhooks: { ...sqlWebhookEndpoints(db), ...sqlWebhookDeliveries(db) },
    transaction: (fn) =>
      db.transaction().execute((trx) =>
        fn({
          ...repositories(kind, trx, audits),
          migrate: () => Promise.reject(new Error('migrate inside a transaction')),
          onChange: () => () => false,
          changeFeed: () => 'listening',
          close: () => Promise.reject(new Error('close inside a transaction')),
        }),
      ),
    async ping() {
      await db.selectNoFrom((eb) => eb.val(1).as('one')).execute();
    },
    async serverTime() {
      // now() is the start of the current transaction: outside one, the moment of this statement.
      const { rows } = await sql<{ now: Date | string }>`select now() as now`.execute(db);
      const value = rows[0]?.now;
      if (value === undefined) throw new Error('select now() returned no row');
      return value instanceof Date ? value : new Date(value);
    },
  };
}
