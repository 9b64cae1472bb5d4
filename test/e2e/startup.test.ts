/**
 * Starting the service as a new user or an operator would: configuration errors (one line, the
 * variable named, exit code 2, no stack trace), production's demands, the maintenance it does on
 * its own, and the embedded default with its demo client and user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable, redisAvailable, REDIS_URL, runSql, type TestDatabase } from '../helpers/services.ts';
import { runIdp, startServer, tempDir, type RunningServer } from '../helpers/process.ts';

const SECRET = 'c'.repeat(64);

function expectOneLineError(result: { code: number | null; stdout: string; stderr: string }, variable: string): void {
  expect(result.code).toBe(2);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(variable);
  expect(lines[0]).toContain('example');
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

describe('configuration errors', () => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ['a base URL that is not http(s)', { IDP_BASE_URL: 'ftp://id.example.com' }, 'IDP_BASE_URL'],
    ['a base URL with a query', { IDP_BASE_URL: 'https://id.example.com/?x=1' }, 'IDP_BASE_URL'],
    ['a port that is not a number', { PORT: 'eighty' }, 'PORT'],
    ['a short master secret', { IDP_SECRET: 'too-short' }, 'IDP_SECRET'],
    ['an unknown sign-in source', { IDP_SIGN_IN_SOURCE: 'kerberos' }, 'IDP_SIGN_IN_SOURCE'],
    ['a database URL of another kind', { DATABASE_URL: 'mysql://db/idp' }, 'DATABASE_URL'],
    ['a rate limit of zero', { IDP_TOKEN_RATE_LIMIT: '0' }, 'IDP_TOKEN_RATE_LIMIT'],
    ['an LDAP source without a directory', { IDP_SIGN_IN_SOURCE: 'ldap' }, 'IDP_LDAP_URL'],
    ['production without a master secret', { NODE_ENV: 'production' }, 'IDP_SECRET'],
    ['production on the embedded database', { NODE_ENV: 'production', IDP_SECRET: SECRET }, 'DATABASE_URL'],
    ['production with the in-process store', { NODE_ENV: 'production', IDP_SECRET: SECRET, DATABASE_URL: 'postgres://db/idp' }, 'REDIS_URL'],
    ['production over http', { NODE_ENV: 'production', IDP_SECRET: SECRET, DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://cache:6379', IDP_BASE_URL: 'http://id.example.com' }, 'IDP_BASE_URL'],
  ];
  it.each(cases)('%s stops the start with one line', async (_name, env, variable) => {
    expectOneLineError(await runIdp(['serve'], env), variable);
  });
});

/** A fresh database for the suite it is called in, and a production server started on it; both gone after the suite. */
function productionOnFreshDatabase() {
  let db: TestDatabase | undefined;
  let server: RunningServer | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });
  const url = () => (db as TestDatabase).url;
  return {
    url,
    async start(extra: Record<string, string> = {}): Promise<RunningServer> {
      server = await startServer({ NODE_ENV: 'production', IDP_ALLOW_HTTP: '1', IDP_SECRET: SECRET, DATABASE_URL: url(), REDIS_URL, ...extra });
      return server;
    },
  };
}

describe.runIf(postgresAvailable && redisAvailable)('production over http with IDP_ALLOW_HTTP=1', () => {
  const production = productionOnFreshDatabase();

  it('starts, with no demo data', async () => {
    const server = await production.start();
    const ready = (await (await fetch(`${server.url}/readyz`)).json()) as Record<string, string>;
    expect(ready).toMatchObject({ database: 'ok', store: 'ok' });
    expect(server.output()).not.toContain('Demo data');
    const clients = await runIdp(['clients', 'list', '--json'], { DATABASE_URL: production.url(), IDP_SECRET: SECRET });
    expect(JSON.parse(clients.stdout)).toStrictEqual({ clients: [] });
  });
});

describe.runIf(postgresAvailable && redisAvailable)('maintenance', () => {
  const production = productionOnFreshDatabase();

  it('deletes refresh token families past their end, and their access tokens\' end, when it starts', async () => {
    const url = production.url();
    expect((await runIdp(['migrate'], { DATABASE_URL: url, IDP_SECRET: SECRET })).code).toBe(0);
    await runSql(url, `INSERT INTO clients (client_id, grant_types, scopes, redirect_uris) VALUES ('web', '{authorization_code,refresh_token}', '{openid,offline_access}', '{https://rp.example/cb}')`);
    await runSql(url, `INSERT INTO users (id, subject, username) VALUES ('u1', 'u1', 'ursula')`);
    const family = (id: string, end: string, accessEnd: string) => runSql(url, `
      INSERT INTO refresh_token_families (id, client_id, user_id, scopes, auth_time, amr, expires_at, token_salt, token_expires_at, access_expires_at)
      VALUES ($1, 'web', 'u1', '{openid,offline_access}', now() - interval '100 days', '{pwd}', now() + $2::interval, '\\x00', now() + $2::interval, now() + $3::interval)`,
    [id, end, accessEnd]);
    await family('ended', '-1 day', '-1 day');
    await family('access-live', '-1 minute', '30 minutes');
    await family('live', '30 days', '1 hour');

    const server = await production.start({ LOG_LEVEL: 'info' });
    const remaining = async () => (await runSql<{ id: string }>(url, 'SELECT id FROM refresh_token_families ORDER BY id')).map((r) => r.id);
    const deadline = Date.now() + 10_000;
    const reported = /"families":1,"msg":"refresh token families past their end deleted"/;
    while (!reported.test(server.output()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.output()).toMatch(reported);
    expect(await remaining()).toEqual(['access-live', 'live']);
  });
});

describe('the embedded default', () => {
  const dir = tempDir();
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('creates a demo client and user on an empty database and prints them once, with a working curl', async () => {
    server = await startServer({ IDP_DATA_DIR: dir.path });
    const output = server.output();
    expect(output).toContain('Demo data');
    const curl = /curl -s -u '([^:]+):([^']+)' -d grant_type=client_credentials -d scope=(\S+) (\S+)/.exec(output);
    expect(curl).not.toBeNull();
    const [, clientId, clientSecret, scope, url] = curl as RegExpExecArray;
    expect(url).toBe(`${server.url}/connect/token`);

    const res = await fetch(url ?? '', {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&scope=${scope}`,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope });
  });

  it('runs a command on the embedded database while the server holds it, through the server', async () => {
    const result = await runIdp(['clients', 'list', '--json'], { IDP_DATA_DIR: dir.path });
    expect({ code: result.code, stderr: result.stderr }).toStrictEqual({ code: 0, stderr: '' });
    expect((JSON.parse(result.stdout) as { clients: Array<{ client_id: string }> }).clients.map((c) => c.client_id)).toStrictEqual(['demo']);
  });

  it('keeps its data and prints no credentials on the next start', async () => {
    await server?.stop();
    const list = await runIdp(['clients', 'list', '--json'], { IDP_DATA_DIR: dir.path });
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { clients: Array<{ client_id: string }> }).clients.map((c) => c.client_id)).toStrictEqual(['demo']);
    server = await startServer({ IDP_DATA_DIR: dir.path });
    expect(server.output()).not.toContain('Demo data');
  });
});
