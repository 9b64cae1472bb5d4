/**
 * Real PostgreSQL and Redis for tests. Each suite gets its own database (created here, dropped
 * after) or its own Redis key prefix. When a service is down, suites that need it are skipped
 * with one line, unless IDP_TEST_REQUIRE_SERVICES=1 (CI), where a missing service fails the run.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { migrations } from '../../migrations/index.ts';
import { openDurableStore } from '../../src/store/sql/durable.ts';

export const POSTGRES_ADMIN_URL = process.env.IDP_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.IDP_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const REQUIRE_SERVICES = process.env.IDP_TEST_REQUIRE_SERVICES === '1';

function reachable(url: string, defaultPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || defaultPort) });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
    socket.once('error', () => resolve(false));
  });
}

const announced = new Set<string>();

async function available(name: string, url: string, port: number): Promise<boolean> {
  const ok = await reachable(url, port);
  if (!ok && REQUIRE_SERVICES) throw new Error(`${name} is required (IDP_TEST_REQUIRE_SERVICES=1) but not reachable at ${url}`);
  if (!ok && !announced.has(name)) {
    announced.add(name);
    console.warn(`${name} not reachable at ${url}: suites that need it are skipped`);
  }
  return ok;
}

/** Top-level-await friendly checks, for `describe.runIf(...)`. */
export const postgresAvailable = await available('PostgreSQL', POSTGRES_ADMIN_URL, 5432);
export const redisAvailable = await available('Redis', REDIS_URL, 6379);

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Creates an empty PostgreSQL database for one suite. */
export function createTestDatabase(): Promise<TestDatabase> {
  return createDatabase(undefined);
}

async function createDatabase(template: string | undefined): Promise<TestDatabase> {
  const name = `idp_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(name),
    async drop() {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.href;
}

/** The migrations as they are now: a template is made again when one of them changes. */
function migrationsHash(): string {
  const hash = createHash('sha256');
  const folder = join(import.meta.dirname, '../../migrations');
  for (const file of readdirSync(folder).sort()) hash.update(file).update(readFileSync(join(folder, file)));
  return hash.digest('hex').slice(0, 16);
}

// Any fixed number: the advisory lock that makes the template once among the suites starting at once.
const TEMPLATE_LOCK = 7_245_113;
let template: Promise<string> | undefined;

/** The templates' names: this prefix, the migrations' hash, and the run (test/global-setup.ts drops it at the end). */
export const TEMPLATE_PREFIX = 'idp_template_';

/**
 * A database with every migration applied, made once per run by the service's
 * own migrate() and then only copied: migrating takes seconds, a copy a fraction of that. Made
 * under another name and renamed when complete, under an advisory lock, so that suites starting
 * at once in other workers wait for it instead of copying half of it. Nobody connects to it
 * afterwards (PostgreSQL copies a database only while no one is connected to it).
 */
function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = `${TEMPLATE_PREFIX}${migrationsHash()}_${process.env.IDP_TEST_RUN_ID ?? 'unnamed'}`;
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    try {
      await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK]);
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (rowCount === 0) {
        const building = `${name}_building`;
        await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
        await admin.query(`CREATE DATABASE ${building}`);
        const durable = await openDurableStore({ databaseUrl: databaseUrl(building) });
        try {
          await durable.migrate();
        } finally {
          await durable.close();
        }
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      }
      return name;
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK]).catch(() => {});
      await admin.end();
    }
  })();
  template.catch(() => (template = undefined));
  return template;
}

/**
 * A PostgreSQL database for one suite with every migration applied already, as `idp migrate`
 * leaves it: for suites about something else than migrating (a server on it migrates nothing).
 */
export async function createMigratedTestDatabase(): Promise<TestDatabase> {
  return createDatabase(await migratedTemplate());
}

/** Runs SQL against a database as an administrator would with psql. */
export async function runSql<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** A key prefix of its own in the shared Redis, for one suite. */
export function redisPrefix(): string {
  return `idp-test-${randomBytes(6).toString('hex')}:`;
}

/** Migrates a database as a release before `upgrade` left it: every migration named before it. */
export async function migrateBefore(url: string, upgrade: string): Promise<void> {
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }) });
  try {
    const earlier = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < upgrade));
    const { error } = await new Migrator({ db, provider: { getMigrations: async () => earlier } }).migrateToLatest();
    if (error) throw error;
  } finally {
    await db.destroy();
  }
}
