/**
 * Kysely over PostgreSQL: a pg pool, a dialect whose migration lock is safe behind a
 * transaction pooler, and named prepared statements; the change feed is in postgres-listen.ts.
 */
import { createHash } from 'node:crypto';
import { Kysely, PostgresAdapter, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient, type QueryExecutorProvider } from 'kysely';
import pg from 'pg';
import { CHANGE_CHANNEL, PLANNED_EACH_TIME, type Connection } from './connection.ts';
import { listenPostgres } from './postgres-listen.ts';
import type { Database } from './tables.ts';

export interface PostgresOptions {
  databaseUrl: string;
  /** Where LISTEN runs (a session of its own, which a transaction pooler does not keep); default databaseUrl. */
  listenUrl?: string | undefined;
  onError?: (error: Error) => void;
  poolSize?: number | undefined;
  /** Named prepared statements (default true); off for poolers that cannot carry them. */
  preparedStatements?: boolean | undefined;
  /** How long connecting, and then each statement, may take (default 2 s and 2.5 s). */
  timeouts?: { connectMs: number; queryMs: number } | undefined;
}

const MIGRATION_LOCK_ID = BigInt('3853314791062309107');

/**
 * Kysely takes its migration lock with the session-level pg_advisory_lock and releases it with a
 * later statement. Behind a transaction pooler the two can reach different server connections:
 * the unlock misses and the lock stays held on a pooled connection, so the next start waits for
 * it until its query times out. A transaction-level lock, taken inside the migration's own
 * transaction (DurableStore.migrate runs the migrator in one), ends with it wherever it ran.
 */
export async function lockMigrations(db: QueryExecutorProvider): Promise<void> {
  await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_ID)})`.execute(db);
}

class TransactionLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await lockMigrations(db);
  }

  override async releaseMigrationLock(): Promise<void> {}
}

class PoolerSafePostgresDialect extends PostgresDialect {
  override createAdapter(): PostgresAdapter {
    return new TransactionLockAdapter();
  }
}

export function connectPostgres(options: PostgresOptions): Connection {
  const { databaseUrl, onError = () => {}, poolSize = 20, preparedStatements = true, timeouts = { connectMs: 2000, queryMs: 2500 } } = options;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    // Every token request commits; a commit waits for the disk, so the pool, not the CPU, can
    // be what limits throughput (10 connections held the code exchange at 70% CPU here).
    max: poolSize,
    connectionTimeoutMillis: timeouts.connectMs,
    idleTimeoutMillis: 30_000,
    // A database that stops answering (a frozen network) fails the request instead of hanging it.
    query_timeout: timeouts.queryMs,
    keepAlive: true,
  });
  // A dropped connection is replaced by the pool; it must never crash the process, idle or busy.
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
  const db = new Kysely<Database>({ dialect: new PoolerSafePostgresDialect({ pool: preparedStatements ? preparingPool(pool) : pool }) });
  // The probe goes where the triggers' notifications start: a data connection, through any pooler.
  const notify = async (payload: string) => {
    await pool.query('select pg_notify($1, $2)', [CHANGE_CHANNEL, payload]);
  };
  return {
    kind: 'postgres',
    db,
    listen: (onEvent) => listenPostgres(options.listenUrl ?? databaseUrl, notify, onEvent, onError),
    poolStats: () => ({ inUse: pool.totalCount - pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  };
}

/** Distinct statements kept prepared per connection at most; beyond, statements are sent plainly. */
const MAX_PREPARED = 500;

/**
 * The pool as Kysely sees it, with one change: data statements go out as named prepared
 * statements, so that PostgreSQL parses and plans each of them once per connection instead of
 * on every request (planning was half of the database's work on a refresh). Statements with a
 * `*` are sent plainly: a prepared `select *` fails once a migration adds a column; so are
 * those marked PLANNED_EACH_TIME.
 */
function preparingPool(pool: pg.Pool): PostgresPool {
  // Every text seen, with its statement name (undefined: sent plainly); bounded like the statements.
  const names = new Map<string, string | undefined>();
  const nameOf = (text: string): string | undefined => {
    if (names.has(text)) return names.get(text);
    if (names.size >= MAX_PREPARED) return undefined;
    const preparable = /^\s*(select|insert|update|delete|with)\b/i.test(text) && !text.includes('*') && !text.includes(PLANNED_EACH_TIME);
    const name = preparable ? `idp_${createHash('sha256').update(text).digest('hex').slice(0, 24)}` : undefined;
    names.set(text, name);
    return name;
  };
  return {
    options: pool.options,
    end: () => pool.end(),
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      const query = (text: unknown, values?: ReadonlyArray<unknown>) => {
        const name = typeof text === 'string' && values !== undefined ? nameOf(text) : undefined;
        return name !== undefined
          ? client.query({ name, text: text as string, values: [...(values as ReadonlyArray<unknown>)] })
          : client.query(text as string, values as unknown[]);
      };
      return {
        // Kysely reads the backend's process id to cancel queries.
        processID: (client as unknown as { processID?: number }).processID,
        query: query as unknown as PostgresPoolClient['query'],
        release: (destroy?: boolean) => client.release(destroy),
      };
    },
  };
}
