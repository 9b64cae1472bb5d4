/**
 * Kysely over PostgreSQL (a pg pool) or embedded PGlite, and the change feed (LISTEN
 * idp_changes) that the triggers of the initial migration publish to.
 */
import { Kysely, PGliteDialect, PostgresDialect, type ColumnType, type Generated } from 'kysely';
import pg from 'pg';
import type { ChangeEvent } from '../types.ts';

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
}

export interface RefreshTokensTable {
  token_hash: string;
  family_id: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  rotated_at: NullableTimestamp;
  successor_hash: string | null;
  successor_sealed: string | null;
  access_jti: string;
  access_expires_at: Timestamp;
}

export interface IssuedAccessTokensTable {
  jti: string;
  user_id: string;
  client_id: string;
  expires_at: Timestamp;
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
}

export type Db = Kysely<Database>;

/** A connected database with its change feed. */
export interface Connection {
  kind: 'postgres' | 'embedded';
  db: Db;
  listen(onEvent: (event: ChangeEvent) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export const CHANGE_CHANNEL = 'idp_changes';

/** Parses a notification payload of the triggers: `client:<id>`, `clients`, `user:<id>`, `users` or `keys`. */
export function parseChange(payload: string | undefined): ChangeEvent | undefined {
  if (payload === 'keys') return { kind: 'keys' };
  if (payload === 'clients') return { kind: 'clients' };
  if (payload === 'users') return { kind: 'users' };
  if (payload?.startsWith('client:')) return { kind: 'client', clientId: payload.slice('client:'.length) };
  if (payload?.startsWith('user:')) return { kind: 'user', userId: payload.slice('user:'.length) };
  return undefined;
}

export function connectPostgres(databaseUrl: string, onError: (error: Error) => void = () => {}): Connection {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: 10,
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    // A database that stops answering (a frozen network) fails the request instead of hanging it.
    query_timeout: 2500,
    keepAlive: true,
  });
  // A dropped connection is replaced by the pool; it must never crash the process, idle or busy.
  pool.on('error', onError);
  pool.on('connect', (client) => client.on('error', onError));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    db,
    listen: (onEvent) => listenPostgres(databaseUrl, onEvent, onError),
    close: () => db.destroy(),
  };
}

/**
 * Holds one dedicated connection in LISTEN. When it drops it reconnects with a growing delay,
 * and announces "everything changed" since notifications sent meanwhile were lost.
 */
async function listenPostgres(
  databaseUrl: string,
  onEvent: (event: ChangeEvent) => void,
  onError: (error: Error) => void,
): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let stopped = false;
  let delay = 100;
  let timer: NodeJS.Timeout | undefined;

  const connect = async (isReconnect: boolean): Promise<void> => {
    const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
    c.on('notification', (msg) => {
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
    if (isReconnect) {
      onEvent({ kind: 'clients' });
      onEvent({ kind: 'users' });
      onEvent({ kind: 'keys' });
    }
  };

  const scheduleReconnect = () => {
    if (stopped || timer) return;
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

  await connect(false);
  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    client?.removeAllListeners();
    client?.on('error', () => {});
    await client?.end().catch(() => {});
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
      return unsubscribe;
    },
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}
