/**
 * What either database gives the durable store: Kysely over the tables, and the change feed
 * (LISTEN idp_changes) that the triggers of the initial migration publish to.
 */
import { dirname, resolve } from 'node:path';
import type { ChangeEvent, ChangeFeedState } from '../types.ts';
import type { Db } from './tables.ts';

/** A connected database with its change feed. */
export interface Connection {
  kind: 'postgres' | 'embedded';
  db: Db;
  listen(onEvent: (event: ChangeEvent) => void): Promise<ChangeFeed>;
  /** A pool's connections in use and the queries waiting for one (PostgreSQL only). */
  poolStats?(): { inUse: number; waiting: number };
  /** Embedded only: serves the database over the PostgreSQL protocol on a Unix socket until stopped. */
  share?(socketPath: string): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** The notifications of one connection: whether they are known to arrive, and how to stop them. */
export interface ChangeFeed {
  state(): ChangeFeedState;
  stop(): Promise<void>;
}

export const CHANGE_CHANNEL = 'idp_changes';

/**
 * Marks a statement whose best plan depends on its parameters (a search: a rare prefix reads an
 * index, a common one walks another): it is never a named prepared statement, whose generic
 * plan, chosen once for any parameters, could read every row for some of them.
 */
export const PLANNED_EACH_TIME = '/* planned each time */';

/**
 * Parses a notification payload of the triggers: `client:<id>`, `clients`, `user:<id>`, `users`,
 * `keys`, `api_scopes`, `webhooks`, `webhook_due` or `revoked:<expiry in epoch seconds>:<key>`.
 */
export function parseChange(payload: string | undefined): ChangeEvent | undefined {
  if (payload?.startsWith('revoked:')) return parseRevoked(payload.slice('revoked:'.length));
  if (payload === 'keys') return { kind: 'keys' };
  if (payload === 'api_scopes') return { kind: 'apiScopes' };
  if (payload === 'webhook_due') return { kind: 'webhookDue' };
  if (payload === 'webhooks') return { kind: 'webhooks' };
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

/**
 * The URL a PostgreSQL client (pg, psql) reaches the socket at: the directory as its host, the
 * port its name ends with (`.s.PGSQL.5432`, PostgreSQL's own naming), the superuser.
 */
export function embeddedSocketUrl(socketPath: string): string {
  const port = /\.s\.PGSQL\.(\d+)$/.exec(socketPath)?.[1];
  if (port === undefined) throw new Error(`${socketPath} is not named as PostgreSQL names its sockets (.s.PGSQL.PORT)`);
  return `postgresql://postgres@/postgres?host=${encodeURIComponent(resolve(dirname(socketPath)))}&port=${port}`;
}
