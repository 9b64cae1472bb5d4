/**
 * Kysely over PostgreSQL (a pg pool) or embedded PGlite, and the change feed (LISTEN
 * idp_changes) that the triggers of the initial migration publish to.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Kysely, PGliteDialect, PostgresAdapter, PostgresDialect, sql, type ColumnType, type QueryExecutorProvider, type Generated, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import type { ChangeEvent, ChangeFeedState } from '../types.ts';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface ClientsTable {
  client_id: string;
  display_name: string;
  enabled: boolean;
  secret_hash: string | null;
  secret_expires_at: NullableTimestamp;
  grant_types: string[];
  scopes: string[];
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  cors_origins: string[];
  access_token_lifetime: number;
  require_consent: boolean;
}

export interface UsersTable {
  id: string;
  source: string;
  subject: string;
  username: string;
  password_hash: string | null;
  given_name: string | null;
  family_name: string | null;
  name: string | null;
  email: string | null;
  email_verified: boolean;
  phone_number: string | null;
  phone_number_verified: boolean;
  roles: string[];
  totp_secret_sealed: string | null;
  locked: boolean;
  must_change_password: boolean;
  must_enrol_mfa: boolean;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ApiScopesTable {
  name: string;
  created_at: Generated<Date>;
}

export interface ConsentsTable {
  user_id: string;
  client_id: string;
  scopes: string[];
  granted_at: Generated<Date>;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  state: string;
  public_jwk: ColumnType<Record<string, unknown>, string, string>;
  private_jwk_sealed: string;
  created_at: Timestamp;
  activated_at: NullableTimestamp;
  retired_at: NullableTimestamp;
}

export interface RefreshTokenFamiliesTable {
  id: string;
  client_id: string;
  user_id: string;
  scopes: string[];
  claims: ColumnType<unknown, string | null, string | null>;
  allowed_scopes: string[];
  nonce: string | null;
  auth_time: Timestamp;
  amr: string[];
  created_at: Generated<Date>;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  revoked_reason: string | null;
  generation: Generated<number>;
  token_salt: Buffer;
  rotated_at: NullableTimestamp;
  earlier_rotations: ColumnType<Date[], never, never>;
  token_expires_at: Timestamp;
  access_expires_at: Timestamp;
}

/** Refresh tokens issued before generations (migration 2026-11-22-0003), kept by hash. */
export interface RefreshTokensTable {
  token_hash: string;
  family_id: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  rotated_at: NullableTimestamp;
  access_jti: string;
  access_expires_at: Timestamp;
}

export interface IssuedAccessTokensTable {
  jti: string;
  user_id: string;
  client_id: string;
  expires_at: Timestamp;
}

/** Revoked access tokens by `jti`, and families by `family:<id>`, until their tokens expire. */
export interface RevocationsTable {
  jti: string;
  expires_at: Timestamp;
  revoked_at: Timestamp;
}

export interface SecretCheckTable {
  id: Generated<number>;
  sealed: string;
  updated_at: Generated<Date>;
}

export interface Database {
  clients: ClientsTable;
  users: UsersTable;
  api_scopes: ApiScopesTable;
  consents: ConsentsTable;
  signing_keys: SigningKeysTable;
  refresh_token_families: RefreshTokenFamiliesTable;
  refresh_tokens: RefreshTokensTable;
  issued_access_tokens: IssuedAccessTokensTable;
  revocations: RevocationsTable;
  secret_check: SecretCheckTable;
}

export type Db = Kysely<Database>;

/** A connected database with its change feed. */
export interface Connection {
  kind: 'postgres' | 'embedded';
  db: Db;
  listen(onEvent: (event: ChangeEvent) => void): Promise<ChangeFeed>;
  /** A pool's connections in use and the queries waiting for one (PostgreSQL only). */
  poolStats?(): { inUse: number; waiting: number };
  /** Embedded only: serves the database to the command line on a Unix socket until stopped. */
  share?(socketPath: string): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The notifications of one connection: whether they are known to arrive, and how to stop them. */
export interface ChangeFeed {
  state(): ChangeFeedState;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  databaseUrl: string;
  /** Where LISTEN runs (a session of its own, which a transaction pooler does not keep); default databaseUrl. */
  listenUrl?: string | undefined;
  onError?: (error: Error) => void;
  poolSize?: number | undefined;
  /** Named prepared statements (default true); off for poolers that cannot carry them. */
  preparedStatements?: boolean | undefined;
}

export const CHANGE_CHANNEL = 'idp_changes';

/**
 * Parses a notification payload of the triggers: `client:<id>`, `clients`, `user:<id>`, `users`,
 * `keys`, `api_scopes` or `revoked:<expiry in epoch seconds>:<key>`.
 */
export function parseChange(payload: string | undefined): ChangeEvent | undefined {
  if (payload?.startsWith('revoked:')) return parseRevoked(payload.slice('revoked:'.length));
  if (payload === 'keys') return { kind: 'keys' };
  if (payload === 'api_scopes') return { kind: 'apiScopes' };
  if (payload === 'clients') return { kind: 'clients' };
  if (payload === 'users') return { kind: 'users' };
  if (payload?.startsWith('client:')) return { kind: 'client', clientId: payload.slice('client:'.length) };
  if (payload?.startsWith('user:')) return { kind: 'user', userId: payload.slice('user:'.length) };
  return undefined;
}

function parseRevoked(rest: string): ChangeEvent | undefined {
  const colon = rest.indexOf(':');
  const seconds = Number(rest.slice(0, colon));
  const key = rest.slice(colon + 1);
  return colon > 0 && Number.isSafeInteger(seconds) && key !== '' ? { kind: 'revoked', key, expiresAt: new Date(seconds * 1000) } : undefined;
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
  const { databaseUrl, onError = () => {}, poolSize = 20, preparedStatements = true } = options;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    // Every token request commits; a commit waits for the disk, so the pool, not the CPU, can
    // be what limits throughput (10 connections held the code exchange at 70% CPU here).
    max: poolSize,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    // A database that stops answering (a frozen network) fails the request instead of hanging it.
    query_timeout: 2500,
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
 * `*` are sent plainly: a prepared `select *` fails once a migration adds a column.
 */
function preparingPool(pool: pg.Pool): PostgresPool {
  // Every text seen, with its statement name (undefined: sent plainly); bounded like the statements.
  const names = new Map<string, string | undefined>();
  const nameOf = (text: string): string | undefined => {
    if (names.has(text)) return names.get(text);
    if (names.size >= MAX_PREPARED) return undefined;
    const preparable = /^\s*(select|insert|update|delete|with)\b/i.test(text) && !text.includes('*');
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

/** How long a probe notification may take to come back before the feed counts as not arriving. */
const PROBE_TIMEOUT_MS = 2000;
/** While notifications do not arrive on a live connection, how often the probe is sent again. */
const REPROBE_INTERVAL_MS = 10_000;
/** When the probe could not even be sent (the data connections are away), how soon it is tried again. */
const RESEND_INTERVAL_MS = 1000;

/**
 * Holds one dedicated connection in LISTEN. When it drops it reconnects with a growing delay,
 * and announces "everything changed" since notifications sent meanwhile were lost.
 *
 * A LISTEN that succeeds proves nothing behind a transaction pooler (PgBouncer): the session
 * that listens goes back to the pool and what is sent to it is dropped. So once listening, a
 * probe is sent through a data connection, as the triggers send theirs; the feed counts as
 * listening only when the probe comes back. A connection that cannot be had at start is
 * retried in the background: the feed is then unavailable, which /readyz reports.
 */
async function listenPostgres(
  listenUrl: string,
  notify: (payload: string) => Promise<void>,
  onEvent: (event: ChangeEvent) => void,
  onError: (error: Error) => void,
): Promise<ChangeFeed> {
  let client: pg.Client | undefined;
  let stopped = false;
  let delay = 100;
  let timer: NodeJS.Timeout | undefined;
  let state: ChangeFeedState = 'unavailable';
  let probe: { payload: string; arrived: () => void } | undefined;
  let reprobe: NodeJS.Timeout | undefined;

  const verify = async (c: pg.Client): Promise<void> => {
    const payload = `probe:${randomBytes(9).toString('base64url')}`;
    const arrived = new Promise<boolean>((resolve) => {
      const timeout = setTimeout(() => resolve(false), PROBE_TIMEOUT_MS);
      timeout.unref();
      probe = { payload, arrived: () => (clearTimeout(timeout), resolve(true)) };
    });
    let sent = true;
    try {
      await notify(payload);
    } catch {
      // The data connections are away: nothing learnt; tried again soon.
      sent = false;
    }
    const ok = sent && (await arrived);
    probe = undefined;
    if (stopped || client !== c) return;
    state = ok ? 'listening' : 'unavailable';
    if (!ok) {
      if (sent) onError(new Error('change notifications do not arrive on the listen connection (a transaction pooler in between?): set IDP_DATABASE_LISTEN_URL to a direct connection'));
      reprobe = setTimeout(() => void verify(c), sent ? REPROBE_INTERVAL_MS : RESEND_INTERVAL_MS);
      reprobe.unref();
    }
  };

  const connect = async (isReconnect: boolean): Promise<void> => {
    const c = new pg.Client({ connectionString: listenUrl, connectionTimeoutMillis: 5000 });
    c.on('notification', (msg) => {
      if (probe && msg.payload === probe.payload) return probe.arrived();
      const event = parseChange(msg.payload);
      if (event) onEvent(event);
    });
    c.on('error', (error) => {
      onError(error);
      scheduleReconnect();
    });
    c.on('end', () => scheduleReconnect());
    client = c;
    await c.connect();
    await c.query(`LISTEN ${CHANGE_CHANNEL}`);
    delay = 100;
    void verify(c);
    if (isReconnect) {
      onEvent({ kind: 'clients' });
      onEvent({ kind: 'users' });
      onEvent({ kind: 'keys' });
      onEvent({ kind: 'revocations' });
      onEvent({ kind: 'apiScopes' });
    }
  };

  const scheduleReconnect = () => {
    state = 'unavailable';
    if (stopped || timer) return;
    if (reprobe) clearTimeout(reprobe);
    client?.removeAllListeners();
    client?.on('error', () => {});
    void client?.end().catch(() => {});
    timer = setTimeout(() => {
      timer = undefined;
      connect(true).catch((error: Error) => {
        onError(error);
        scheduleReconnect();
      });
    }, delay);
    timer.unref();
    delay = Math.min(delay * 2, 5000);
  };

  try {
    await connect(false);
  } catch (error) {
    // Serving goes on (the data connections may work); /readyz says the feed is away.
    onError(error as Error);
    scheduleReconnect();
  }
  return {
    state: () => state,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      if (reprobe) clearTimeout(reprobe);
      client?.removeAllListeners();
      client?.on('error', () => {});
      await client?.end().catch(() => {});
    },
  };
}

export async function connectEmbedded(dataDir: string | undefined): Promise<Connection> {
  // PGlite is loaded only when used: its WebAssembly is large and production never needs it.
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = dataDir === undefined ? new PGlite() : new PGlite(dataDir);
  await pglite.waitReady;
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return {
    kind: 'embedded',
    db,
    listen: async (onEvent) => {
      const unsubscribe = await pglite.listen(CHANGE_CHANNEL, (payload) => {
        const event = parseChange(payload);
        if (event) onEvent(event);
      });
      // In process: a notification cannot get lost on the way.
      return { state: () => 'listening', stop: unsubscribe };
    },
    share: async (socketPath) => {
      const { shareEmbedded } = await import('./shared-embedded.ts');
      return shareEmbedded(pglite, socketPath);
    },
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}
