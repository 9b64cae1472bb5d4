/**
 * Starting the service as a new user or an operator would: configuration errors (one line, the
 * variable named, exit code 2, no stack trace), production's demands, the maintenance it does on
 * its own, and the embedded default with its demo client and user.
 */
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable, redisAvailable, REDIS_URL, runSql, type TestDatabase } from '../helpers/services.ts';
import { outputWhen, runIdp, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { rawRequest } from './operations-support.ts';

const SECRET = 'c'.repeat(64);

function expectOneLineError(result: { code: number | null; stdout: string; stderr: string }, variable: string): void {
  expect(result.code).toBe(2);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(variable);
  expect(lines[0]).toContain('example');
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

/** Production with every other demand met; nothing is contacted before the configuration passes. */
const PRODUCTION = { NODE_ENV: 'production', IDP_SECRET: SECRET, DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://cache:6379', IDP_BASE_URL: 'https://id.example.com' };

describe('configuration errors', () => {
  const cases: Array<[string, Record<string, string>, string]> = [
    ['a base URL that is not http(s)', { IDP_BASE_URL: 'ftp://id.example.com' }, 'IDP_BASE_URL'],
    ['a base URL with a query', { IDP_BASE_URL: 'https://id.example.com/?x=1' }, 'IDP_BASE_URL'],
    ['a port that is not a number', { PORT: 'eighty' }, 'PORT'],
    ['a short master secret', { IDP_SECRET: 'too-short' }, 'IDP_SECRET'],
    ['an unknown sign-in source', { IDP_SIGN_IN_SOURCE: 'kerberos' }, 'IDP_SIGN_IN_SOURCE'],
    ['a database URL of another kind', { DATABASE_URL: 'mysql://db/idp' }, 'DATABASE_URL'],
    ['a rate limit of zero', { IDP_TOKEN_RATE_LIMIT: '0' }, 'IDP_TOKEN_RATE_LIMIT'],
    ['an LDAP source without a directory', { IDP_SIGN_IN_SOURCE: 'ldap', IDP_LDAP_BASE_DN: 'dc=corp' }, 'IDP_LDAP_URL'],
    ['production without a master secret', { ...PRODUCTION, IDP_SECRET: '' }, 'IDP_SECRET'],
    ['production on the embedded database', { ...PRODUCTION, DATABASE_URL: '' }, 'DATABASE_URL'],
    ['production with the in-process store', { ...PRODUCTION, REDIS_URL: '' }, 'REDIS_URL'],
    ['a brand colour that is not #rgb or #rrggbb', { IDP_BRAND_COLOR: 'blue' }, 'IDP_BRAND_COLOR'],
    ['a brand logo file that is not there', { IDP_BRAND_LOGO: '/nonexistent/logo.png' }, 'IDP_BRAND_LOGO'],
    ['production over http', { NODE_ENV: 'production', IDP_SECRET: SECRET, DATABASE_URL: 'postgres://db/idp', REDIS_URL: 'redis://cache:6379', IDP_BASE_URL: 'http://id.example.com' }, 'IDP_BASE_URL'],
    ['production with an http upstream', { ...PRODUCTION, IDP_SIGN_IN_SOURCE: 'oidc', IDP_UPSTREAM_ISSUER: 'http://accounts.example.com/', IDP_UPSTREAM_CLIENT_ID: 'idp' }, 'IDP_UPSTREAM_ISSUER'],
    ['production with ldap:// and no StartTLS', { ...PRODUCTION, IDP_SIGN_IN_SOURCE: 'ldap', IDP_LDAP_URL: 'ldap://dc1.corp.example', IDP_LDAP_BASE_DN: 'dc=corp' }, 'IDP_LDAP_URL'],
    ['a mistyped NODE_ENV (which once ran development mode)', { NODE_ENV: 'prod' }, 'NODE_ENV'],
    ['a trusted proxy that is no address', { IDP_TRUST_PROXY: 'yes' }, 'IDP_TRUST_PROXY'],
    ['a previous secret without a current one', { IDP_SECRET_PREVIOUS: SECRET }, 'IDP_SECRET'],
    ['a short previous secret', { IDP_SECRET: SECRET, IDP_SECRET_PREVIOUS: `${SECRET},abcd` }, 'IDP_SECRET_PREVIOUS'],
  ];
  it.each(cases)('%s stops the start with one line', async (_name, env, variable) => {
    expectOneLineError(await runIdp(['serve'], env), variable);
  });
});

describe('several configuration errors at once', () => {
  it('are all named in one try, one line each, in the order of the configuration reference\'s table', async () => {
    // Once five tries: each start named only the first.
    const result = await runIdp(['serve'], { NODE_ENV: 'production', PORT: 'eighty', IDP_SIGN_IN_SOURCE: 'ldap' });
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.map((line) => /^configuration error: (\S+) /.exec(line)?.[1])).toStrictEqual([
      'PORT', 'IDP_SECRET', 'DATABASE_URL', 'REDIS_URL', 'IDP_BASE_URL', 'IDP_LDAP_URL', 'IDP_LDAP_BASE_DN',
    ]);
    for (const line of lines) expect(line).toMatch(/\(example: [A-Z_]+=.+\)$/);
    expect(lines[0]).toBe('configuration error: PORT must be a whole number from 0 to 65535 (example: PORT=3000)');
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

describe('the master secret as written', () => {
  it('says how many bytes a short secret decodes to, and shows a command that makes a good one', async () => {
    const result = await runIdp(['serve'], { IDP_SECRET: Buffer.alloc(16, 1).toString('base64') });
    expectOneLineError(result, 'IDP_SECRET');
    expect(result.stderr).toContain('decodes to 16');
    expect(result.stderr).toContain('openssl rand -base64 32');
  });

  it('takes standard base64 (+ / =) as openssl writes it, as well as base64url and hex', async () => {
    // 0xfb bytes are `+` and `/` in standard base64; `=` pads it. (The decoding: test/unit/config.test.ts.)
    const spellings = [Buffer.alloc(32, 0xfb).toString('base64'), Buffer.alloc(32, 0xfb).toString('base64url'), 'fb'.repeat(32)];
    expect(spellings[0]).toMatch(/[+/].*=$/);
    const results = await Promise.all(spellings.map((secret) => runIdp(['help'], { IDP_SECRET: secret })));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
  });
});

describe('start-up failures name their variable', () => {
  it('names DATABASE_URL when the database does not answer, and never its password', async () => {
    const result = await runIdp(['serve'], { DATABASE_URL: 'postgres://idp:hunter2@127.0.0.1:1/idp' });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/DATABASE_URL: cannot use the database \(postgres 127\.0\.0\.1:1\/idp\): connect ECONNREFUSED/);
    expect(result.stderr).not.toContain('hunter2');
  });
});

describe('a port in use', () => {
  it('stops the start with one line naming PORT', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    const dir = tempDir();
    try {
      const result = await runIdp(['serve'], { IDP_DATA_DIR: dir.path, HOST: '127.0.0.1', PORT: String(port) });
      expect(result.code).toBe(1);
      const lines = result.stderr.trim().split('\n');
      expect(lines, result.stderr).toHaveLength(1);
      expect(lines[0]).toContain(`PORT, HOST: cannot listen on 127.0.0.1:${port}`);
      expect(lines[0]).toContain('EADDRINUSE');
    } finally {
      taken.close();
      dir.remove();
    }
  });
});

describe.runIf(postgresAvailable && redisAvailable)('production over http with IDP_ALLOW_HTTP=1', () => {
  const production = productionOnFreshDatabase();

  it('starts, with no demo data, and says so in one line without the database password', async () => {
    // Trust authentication takes any password: this one must not be printed.
    const withPassword = production.url().replace('postgres://postgres@', 'postgres://postgres:hunter2@');
    const server = await production.start({ LOG_LEVEL: 'info', DATABASE_URL: withPassword });
    const started = '"msg":"started: ';
    const line = (await outputWhen(server, (o) => o.includes(started))).split('\n').find((l) => l.includes(started));
    const database = new URL(production.url());
    expect(line, server.output()).toBeDefined();
    expect(JSON.parse(line ?? '{}')).toMatchObject({
      msg: `started: mode production, issuer ${server.url}/, database postgres ${database.host}${database.pathname}, store redis ${new URL(REDIS_URL).host}, sign-in source local, listening 127.0.0.1:${server.port}, `
        + 'mail off (IDP_SMTP_URL unset: password recovery by mail, email verification and mail notices are not offered)',
    });
    expect(server.output()).not.toContain('hunter2');
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
    const reported = /"families":1,"msg":"refresh token families past their end deleted"/;
    expect(await outputWhen(server, (o) => reported.test(o))).toMatch(reported);
    expect(await remaining()).toEqual(['access-live', 'live']);
  });
});

describe('a first run with only PORT set', () => {
  const dir = tempDir();
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('serves the issuer http://localhost:PORT, prints links to it, and says how it runs in one line', async () => {
    // What `PORT=3927 npm start` does, on a free port; LDAP settings left over from elsewhere.
    server = await startServer({ IDP_BASE_URL: undefined, IDP_DATA_DIR: dir.path, LOG_LEVEL: 'info', IDP_LDAP_URL: 'ldap://dir.example' });
    const local = `http://localhost:${server.port}`;
    const discovery = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, string>;
    expect(discovery.issuer).toBe(`${local}/`);
    expect(discovery.token_endpoint).toBe(`${local}/connect/token`);
    // The started line is the last one written at start (its log line may follow /readyz's answer).
    const output = await outputWhen(server, (o) => o.includes('started: '));
    expect(output).toContain(`${local}/connect/token`);
    expect(output).toContain(`started: mode development, issuer ${local}/, database embedded ${dir.path}/db, store in-process (one instance only), sign-in source local, listening 127.0.0.1:${server.port}`);
    expect(output).toContain('IDP_LDAP_URL is set but IDP_SIGN_IN_SOURCE=local: it does nothing unless IDP_SIGN_IN_SOURCE=ldap');
  });

  it('answers a request for another host with the host it expected and the settings that decide it', async () => {
    const res = await rawRequest(server?.port ?? 0, { path: '/.well-known/openid-configuration', host: 'id.example.com' });
    expect(res.status).toBe(400);
    const body = JSON.parse(res.text) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toContain(`answers for localhost:${server?.port} (IDP_BASE_URL)`);
    expect(body.error_description).toContain('IDP_TRUST_PROXY');
  });
});

describe('a development start with HOST unset and IDP_TRUST_PROXY=true', () => {
  const dir = tempDir();
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });
  /** An address of this machine other than loopback, if it has one. */
  const outside = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

  it('listens on loopback only (it prints a demo user\'s password), and says so in the started line', async () => {
    server = await startServer({ HOST: undefined, IDP_DATA_DIR: dir.path, LOG_LEVEL: 'info', IDP_TRUST_PROXY: 'true' });
    const output = await outputWhen(server, (o) => o.includes('started: '));
    expect(output).toContain(`listening 127.0.0.1:${server.port} (this machine only; HOST=0.0.0.0 listens on every interface)`);
    if (outside) {
      const reached = await new Promise<string>((resolve) => {
        const socket = net.connect({ host: outside, port: server?.port ?? 0 });
        socket.once('connect', () => (socket.destroy(), resolve('connected')));
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      expect(reached).toBe('ECONNREFUSED');
    }
  });

  it('warns at start that IDP_TRUST_PROXY=true lets clients choose their address, and says what to set instead', async () => {
    const output = await outputWhen(server ?? { output: () => '' }, (o) => o.includes('X-Forwarded-For'));
    const warning = output.split('\n').find((line) => line.includes('IDP_TRUST_PROXY=true'));
    expect(JSON.parse(warning ?? '{}')).toMatchObject({
      level: 40,
      msg: 'IDP_TRUST_PROXY=true believes the first X-Forwarded-For address, which any client writes: the per-address limits count the addresses clients choose. '
        + "Set the number of proxies in front (IDP_TRUST_PROXY=1) or the proxy's address instead",
    });
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
    expect(output).toContain(`Administration console: ${server.url}/admin `);
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
    // The demo user is the console's first administrator.
    const users = await runIdp(['users', 'list', '--json'], { IDP_DATA_DIR: dir.path });
    expect(users.stdout).toMatch(/"roles":\s*\[[^\]]*"idp-admin"/);
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
