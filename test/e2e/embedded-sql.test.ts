/**
 * SQL on the embedded default, as an administrator types it (the README's "Editing clients with
 * SQL"): beside `idp serve` on the embedded database, `psql -h DATA_DIR -U postgres` and
 * `idp sql -c` change a client row, and the running server honours the change within a second;
 * `idp sql` without -c is psql's session (here fed on stdin); and with no server running,
 * `idp sql` opens the embedded database itself. On PostgreSQL, `idp sql` runs on DATABASE_URL.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkce } from '../helpers/oauth.ts';
import { runIdp, runProcess, startServer, tempDir, testEnv, type RunResult, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';
import { waitUntil } from '../helpers/waits.ts';

const IDP_SECRET = 'd'.repeat(64);
/** A first start unpacks the embedded database: slow on a shared machine. */
const START_MS = 90_000;

function json<T = Record<string, unknown>>(result: RunResult): T {
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

/** How /connect/authorize answers the demo client for `redirectUri`: 303 to sign in when registered, 400 otherwise. */
async function authorizeStatus(server: RunningServer, redirectUri: string): Promise<number> {
  const query = new URLSearchParams({
    response_type: 'code', client_id: 'demo', scope: 'openid', redirect_uri: redirectUri, state: 's',
    code_challenge: pkce().challenge, code_challenge_method: 'S256',
  });
  const res = await fetch(`${server.url}/connect/authorize?${query.toString()}`, { redirect: 'manual' });
  await res.arrayBuffer();
  return res.status;
}

/** Waits for the server to accept `redirectUri` at /authorize, for one second at most. */
async function acceptedWithinASecond(server: RunningServer, redirectUri: string): Promise<void> {
  await waitUntil(`the server accepts ${redirectUri}`, async () => (await authorizeStatus(server, redirectUri)) === 303, { limitMs: 1000, intervalMs: 50 });
}

describe('SQL beside the development server on the embedded database', () => {
  const dataDir = tempDir();
  const env = { IDP_SECRET, IDP_DATA_DIR: dataDir.path };
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer(env, START_MS);
  }, START_MS + 10_000);
  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it('lets psql -h DATA_DIR -U postgres change a client, and the server honours it within a second', async () => {
    const uri = 'https://psql.example/cb';
    expect(await authorizeStatus(server, uri)).toBe(400);
    const psql = await runProcess('psql', ['-h', dataDir.path, '-U', 'postgres', '-v', 'ON_ERROR_STOP=1', '-c',
      `UPDATE clients SET redirect_uris = redirect_uris || '{${uri}}' WHERE client_id = 'demo'`], testEnv({}));
    expect(psql, psql.stderr).toMatchObject({ code: 0, stdout: 'UPDATE 1\n' });
    await acceptedWithinASecond(server, uri);
  });

  it('lets idp sql -c change a client, and prints a query\'s rows', async () => {
    const uri = 'https://idp-sql.example/cb';
    expect(await authorizeStatus(server, uri)).toBe(400);
    const update = await runIdp(['sql', '-c', `UPDATE clients SET redirect_uris = redirect_uris || '{${uri}}' WHERE client_id = 'demo'`], env);
    expect(update, update.stderr).toMatchObject({ code: 0, stdout: 'UPDATE 1\n' });
    await acceptedWithinASecond(server, uri);

    const text = await runIdp(['sql', '-c', "SELECT client_id, enabled FROM clients WHERE client_id = 'demo'"], env);
    expect(text.stdout.split('\n')).toStrictEqual(['client_id  enabled', 'demo       t', '(1 row)', '']);
    const rows = json<{ rows: unknown[] }>(await runIdp(['sql', '--json', '-c', "SELECT client_id, enabled, redirect_uris, access_token_lifetime FROM clients WHERE client_id = 'demo'"], env));
    expect(rows).toStrictEqual({
      command: 'SELECT', row_count: 1,
      rows: [{ client_id: 'demo', enabled: true, redirect_uris: expect.arrayContaining([uri]) as unknown, access_token_lifetime: 3600 }],
    });
  });

  it('refuses a row that breaks a rule with the database\'s one line (exit 1), and changes nothing', async () => {
    const refused = await runIdp(['sql', '-c', "UPDATE clients SET redirect_uris = '{https://x.example/cb#fragment}' WHERE client_id = 'demo'"], env);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/constraint/);
    expect(await authorizeStatus(server, 'https://idp-sql.example/cb')).toBe(303);
  });

  it('opens psql without -c (here reading statements from stdin)', async () => {
    const session = await runIdp(['sql'], env, "SELECT count(*) AS demo_clients FROM clients WHERE client_id = 'demo';\n");
    expect(session.code, session.stderr).toBe(0);
    expect(session.stdout).toMatch(/demo_clients\s*\n-+\s*\n\s*1\s*\n\(1 row\)/);
  });

  it('keeps the server answering while a psql session stays open outside a transaction', async () => {
    const open = runIdp(['sql'], env, `SELECT pg_sleep(0); \\! sleep 2\nSELECT 1 AS still_here;\n`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const started = Date.now();
    expect(await authorizeStatus(server, 'https://psql.example/cb')).toBe(303);
    expect(Date.now() - started).toBeLessThan(1000);
    const session = await open;
    expect(session.stdout, session.stderr).toMatch(/still_here/);
  });
});

describe('idp sql with no server running', () => {
  const dataDir = tempDir();
  const env = { IDP_SECRET, IDP_DATA_DIR: dataDir.path };
  afterAll(() => dataDir.remove());

  it('opens the embedded database itself, serves it to psql while it lasts, and leaves no socket behind', async () => {
    const insert = await runIdp(['sql', '-c', "INSERT INTO api_scopes (name) VALUES ('orders.read')"], env);
    expect(insert, insert.stderr).toMatchObject({ code: 0, stdout: 'INSERT 1\n' });
    const session = await runIdp(['sql'], env, 'SELECT name FROM api_scopes;\n');
    expect(session.stdout, session.stderr).toContain('orders.read');
    expect(existsSync(join(dataDir.path, '.s.PGSQL.5432'))).toBe(false);
    expect(json<{ api_scopes: string[] }>(await runIdp(['scopes', 'list', '--json'], env)).api_scopes).toContain('orders.read');
    // Each of the three commands opens the embedded database itself (the first unpacks it).
  }, 3 * START_MS);
});

describe.runIf(postgresAvailable)('idp sql on PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    expect((await runIdp(['migrate'], { IDP_SECRET, DATABASE_URL: db.url })).code).toBe(0);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('runs on DATABASE_URL, -c and psql alike', async () => {
    const env = { IDP_SECRET, DATABASE_URL: db.url };
    expect(json(await runIdp(['sql', '--json', '-c', "INSERT INTO api_scopes (name) VALUES ('orders.write')"], env))).toStrictEqual({ command: 'INSERT', row_count: 1, rows: [] });
    const session = await runIdp(['sql'], env, 'SELECT name FROM api_scopes;\n');
    expect(session.stdout, session.stderr).toContain('orders.write');
  });
});
