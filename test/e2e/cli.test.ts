/**
 * The `idp` command line, driven from outside as an administrator would: spawned processes,
 * their exit codes (0 success, 1 refused, 2 bad usage), stdout and stderr, and the rows they
 * leave in a real PostgreSQL database (and, for a few commands, in the embedded one).
 */
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyClientSecret } from '../../src/tokens/opaque.ts';
import { basic } from '../helpers/oauth.ts';
import { runIdp, seedWith, startServer, tempDir, type RunResult, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'c'.repeat(64);
const SECRET_HASH = /^sha256\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/;

function json<T = Record<string, unknown>>(result: RunResult): T {
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as T;
}

/** A refusal or usage error: the exit code and exactly one line on stderr, no stack trace. */
function expectOneLine(result: RunResult, code: 1 | 2, text: string | RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toStrictEqual({ code, stdout: '' });
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(text);
}

describe('idp without a database', () => {
  const dataDir = tempDir();
  const idp = (args: string[], stdin?: string) => runIdp(args, { IDP_SECRET, IDP_DATA_DIR: dataDir.path }, stdin);
  afterAll(() => dataDir.remove());

  it('prints its usage for help (0) and for an unknown command (2)', async () => {
    const help = await idp(['help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('clients add --id ID');
    const unknown = await idp(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split('\n')[0]).toBe('idp: unknown command "frobnicate"');
    expect(unknown.stderr).toContain('users list | show U');
  });

  it('answers --help on every command and subcommand with its usage on stdout (0), and a bare idp with the list (2)', async () => {
    const asked: Array<[string[], RegExp]> = [
      [['--help'], /^usage: idp COMMAND/],
      [['serve', '--help'], /^usage: idp serve\n/],
      [['migrate', '--help'], /^usage: idp migrate\n/],
      [['seed', '--help'], /^usage: idp seed FILE.json\n/],
      [['clients', '--help'], /^usage: idp clients add --id ID[^]*usage: idp clients rotate-secret ID \[--keep-old-for DURATION\]\n/],
      [['clients', 'add', '--help'], /^usage: idp clients add --id ID .*\n[^]*--secret-expires-at ISO8601\]\n {2}Registers a client/],
      [['clients', 'show', 'web', '-h'], /^usage: idp clients show ID\n {2}Shows one client/],
      [['users', 'add', '--username', 'alice', '--help'], /^usage: idp users add --username U \(--password P \| --password-stdin\)/],
      [['users', 'require-mfa', '--help'], /^usage: idp users require-mfa U\n/],
      [['scopes', 'remove', '--help'], /^usage: idp scopes remove NAME\n {2}Removes an API scope/],
      [['keys', 'retire', '--help'], /^usage: idp keys retire KID \[--force\]\n/],
      [['secret-hash', '--help'], /^usage: idp secret-hash\n/],
      [['doctor', '--help'], /^usage: idp doctor \[--url URL\] \[--management-url URL\]\n/],
      [['help', 'keys', 'rotate'], /^usage: idp keys rotate\n/],
    ];
    // A broken configuration does not stand in the way of help: none is read.
    const results = await Promise.all(asked.map(([args]) => runIdp(args, { PORT: 'not-a-port', IDP_DATA_DIR: dataDir.path })));
    results.forEach((result, i) => {
      expect({ args: asked[i]?.[0], code: result.code, stderr: result.stderr }).toStrictEqual({ args: asked[i]?.[0], code: 0, stderr: '' });
      expect(result.stdout).toMatch(asked[i]?.[1] ?? /never/);
    });
    const bare = await idp([]);
    expect({ code: bare.code, stdout: bare.stdout }).toStrictEqual({ code: 2, stdout: '' });
    expect(bare.stderr).toMatch(/^usage: idp COMMAND/);
    expect(bare.stderr).toContain('  serve ');
  });

  it('prints errors as one JSON document on stdout under --json', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['clients', 'add', '--colour', 'red', '--json'], 2, /^unknown option --colour /],
      [['frobnicate', '--json'], 2, /^unknown command "frobnicate"/],
      [['users', 'frob', '--json'], 2, /^unknown subcommand "frob"/],
      [['seed', join(dataDir.path, 'missing.json'), '--json'], 1, /^cannot read .*missing\.json: ENOENT$/],
    ];
    const results = await Promise.all(cases.map(([args]) => idp(args)));
    results.forEach((result, i) => {
      const [, exit, message] = cases[i] ?? [[], 0, /never/];
      expect({ code: result.code, stderr: result.stderr }).toStrictEqual({ code: exit, stderr: '' });
      const document = JSON.parse(result.stdout) as { error: string; exit: number };
      expect(document.exit).toBe(exit);
      expect(document.error).toMatch(message);
    });
    const badSeed = join(dataDir.path, 'bad.json');
    writeFileSync(badSeed, JSON.stringify({ users: [{ username: 'eve', password: 'short' }], colour: 'red' }));
    const refused = await idp(['seed', badSeed, '--json']);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toStrictEqual({
      error: `${badSeed} refused: 2 wrong field(s); nothing was written`, exit: 1,
      details: ['colour: unknown field', 'users[0].password: Use at least 12 characters.'],
    });
    // A configuration error too.
    const misconfigured = await runIdp(['clients', 'list', '--json'], { PORT: 'not-a-port', IDP_SECRET, IDP_DATA_DIR: dataDir.path });
    expect(misconfigured.code).toBe(2);
    expect(JSON.parse(misconfigured.stdout)).toMatchObject({ exit: 2, error: expect.stringContaining('PORT') });
  });

  it('refuses bad usage in every command family with one line naming the flag or argument (2)', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['doctor', '--colour', 'red'], /^unknown option --colour /],
      [['clients', 'add', '--id', 'web', '--colour', 'red'], /^unknown option --colour /],
      [['clients', 'add', '--id', 'web', '--redirect-uri', 'https://app.example/cb#x'], /^--redirect-uri "https:\/\/app.example\/cb#x": must be an https URI, an http URI on a loopback address, or a private-use scheme with a period \(com\.example\.app:\/callback\), without a fragment$/],
      [['clients', 'add', '--id', 'web', '--redirect-uri', 'javascript:alert(1)'], /^--redirect-uri "javascript:alert\(1\)": must be an https URI, /],
      [['clients', 'show'], /^missing argument ID /],
      [['users', 'add', '--username', 'alice', '--password'], /^option --password needs a value /],
      [['users', 'frob'], /^unknown subcommand "frob"/],
      [['scopes', 'add', 'orders read'], /^scope "orders read": must be an RFC 6749 scope token/],
      [['keys', 'retire'], /^missing argument KID /],
      [['keys', 'retire', '-x'], /^unknown option -x /],
      [['keys', 'retire', '--force'], /^missing argument KID /],
      [['keys', 'retire', '--force=yes'], /^option --force takes no value /],
      [['seed'], /^missing argument FILE.json /],
      [['secret-hash', 'extra'], /^unexpected argument "extra" /],
      [['migrate', '--force'], /^unknown option --force /],
      [['secrets', 'rotate'], /^unknown subcommand "rotate" \(usage: idp secrets reseal\)$/],
      [['secrets', 'reseal', 'now'], /^unexpected argument "now" /],
    ];
    // Independent processes that never reach a database: run them side by side.
    const results = await Promise.all(cases.map(([args]) => idp(args)));
    results.forEach((result, i) => expectOneLine(result, 2, cases[i]?.[1] ?? /never/));
  });

  it('hashes a client secret read on stdin, and refuses a short one (1)', async () => {
    const secret = 'a-client-secret-of-more-than-32-characters';
    const hashed = await idp(['secret-hash'], `${secret}\n`);
    expect(hashed.code).toBe(0);
    const hash = hashed.stdout.trim();
    expect(hash).toMatch(SECRET_HASH);
    expect(verifyClientSecret(secret, hash)).toBe(true);
    expectOneLine(await idp(['secret-hash'], 'too-short\n'), 1, /at least 32 characters/);
  });
});

describe.runIf(postgresAvailable)('idp on PostgreSQL', () => {
  let db: TestDatabase;
  const dataDir = tempDir();
  const idp = (args: string[], stdin?: string) => runIdp(args, { IDP_SECRET, IDP_DATA_DIR: dataDir.path, DATABASE_URL: db.url }, stdin);

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
    dataDir.remove();
  });

  it('migrates, then says the database is up to date', async () => {
    const first = await idp(['migrate']);
    expect(first.code).toBe(0);
    const applied = first.stdout.trimEnd().split('\n');
    expect(applied[0]).toBe('applied 2026-11-22-0001-initial');
    expect(applied.filter((line) => !/^applied \d{4}-\d{2}-\d{2}-\d{4}-[a-z0-9-]+$/.test(line))).toStrictEqual([]);
    expect(json(await idp(['migrate', '--json']))).toStrictEqual({ applied: [] });
  });

  it('adds a confidential client: the secret is printed once and only its hash is stored', async () => {
    const added = json<{ client_id: string; client_secret: string }>(await idp(['clients', 'add', '--id', 'web', '--name', 'Web shop',
      '--grant', 'authorization_code', '--grant', 'refresh_token', '--redirect-uri', 'https://shop.example/cb', '--json']));
    expect(added.client_id).toBe('web');
    expect(added.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const shown = await idp(['clients', 'show', 'web', '--json']);
    expect(shown.stdout).not.toContain(added.client_secret);
    expect(json(shown)).toMatchObject({ client_id: 'web', client_type: 'confidential', has_secret: true, secret_expires_at: null });
    expect(shown.stdout).not.toContain('sha256$');

    const [row] = await runSql<{ secret_hash: string }>(db.url, `SELECT secret_hash FROM clients WHERE client_id = 'web'`);
    expect(row?.secret_hash).toMatch(SECRET_HASH);
    expect(verifyClientSecret(added.client_secret, row?.secret_hash ?? '')).toBe(true);
    const hashed = await idp(['secret-hash'], added.client_secret);
    expect(hashed.stdout.trim()).toMatch(SECRET_HASH);

    const listed = await idp(['clients', 'list']);
    expect(listed.stdout).toMatch(/^web +Web shop +yes +confidential +authorization_code refresh_token/m);
    expect(listed.stdout).not.toContain(added.client_secret);
  });

  it('refuses an existing client and a public client with client_credentials (1), adds a public one', async () => {
    expectOneLine(await idp(['clients', 'add', '--id', 'web']), 1, /^client web already exists$/);
    expectOneLine(await idp(['clients', 'add', '--id', 'spa', '--public', '--grant', 'client_credentials']), 1, /public client cannot use the client_credentials grant/);
    expectOneLine(await idp(['clients', 'add', '--id', 'spa', '--access-token-lifetime', '0']), 2, /^--access-token-lifetime "0": /);
    const spa = json(await idp(['clients', 'add', '--id', 'spa', '--public', '--cors-origin', 'https://spa.example', '--json']));
    expect(spa).toMatchObject({ client_id: 'spa', client_type: 'public', grant_types: ['authorization_code'] });
    expect(spa).not.toHaveProperty('client_secret');
    expect(await runSql(db.url, `SELECT secret_hash FROM clients WHERE client_id = 'spa'`)).toStrictEqual([{ secret_hash: null }]);
  });

  it('disables, rotates the secret of, and removes clients', async () => {
    expect((await idp(['clients', 'disable', 'web'])).code).toBe(0);
    expect(await runSql(db.url, `SELECT enabled FROM clients WHERE client_id = 'web'`)).toStrictEqual([{ enabled: false }]);
    const [before] = await runSql<{ secret_hash: string }>(db.url, `SELECT secret_hash FROM clients WHERE client_id = 'web'`);
    const rotated = json<{ client_secret: string }>(await idp(['clients', 'rotate-secret', 'web', '--json']));
    const [after] = await runSql<{ secret_hash: string }>(db.url, `SELECT secret_hash FROM clients WHERE client_id = 'web'`);
    expect(after?.secret_hash).not.toBe(before?.secret_hash);
    expect(verifyClientSecret(rotated.client_secret, after?.secret_hash ?? '')).toBe(true);
    expectOneLine(await idp(['clients', 'rotate-secret', 'spa']), 1, /public client/);
    expectOneLine(await idp(['clients', 'enable', 'nope']), 1, /^no client with id nope$/);
    expect((await idp(['clients', 'remove', 'spa'])).code).toBe(0);
    expect(await runSql(db.url, `SELECT client_id FROM clients ORDER BY 1`)).toStrictEqual([{ client_id: 'web' }]);
  });

  it('maps a database constraint violation to one refused line', async () => {
    await runSql(db.url, `ALTER TABLE clients ADD CONSTRAINT test_no_evil CHECK (client_id <> 'evil')`);
    expectOneLine(await idp(['clients', 'add', '--id', 'evil']), 1, /^client evil refused by the database: constraint test_no_evil is violated$/);
    await runSql(db.url, `ALTER TABLE clients DROP CONSTRAINT test_no_evil`);
  });

  it('adds, shows, flags and removes users without ever printing a password hash', async () => {
    const added = json<{ sub: string; id: string }>(await idp(['users', 'add', '--username', 'alice', '--password', 'correct horse battery staple',
      '--given-name', 'Alice', '--email', 'alice@example.com', '--email-verified', '--role', 'admin', '--json']));
    expect(added.sub).toBe(added.id);
    expectOneLine(await idp(['users', 'add', '--username', 'ALICE', '--password', 'another long password 1']), 1, /^user ALICE already exists$/);
    expect((await idp(['users', 'lock', 'alice'])).code).toBe(0);
    expect((await idp(['users', 'require-mfa', 'alice'])).code).toBe(0);
    const shown = await idp(['users', 'show', 'alice', '--json']);
    expect(json(shown)).toMatchObject({ sub: added.sub, username: 'alice', email: 'alice@example.com', email_verified: true,
      roles: ['admin'], locked: true, must_change_password: false, must_enrol_mfa: true, mfa_enrolled: false });
    const [row] = await runSql<{ password_hash: string }>(db.url, `SELECT password_hash FROM users WHERE username = 'alice'`);
    expect(row?.password_hash).toMatch(/^\$argon2id\$/);
    expect(shown.stdout).not.toContain('argon2');
    expect((await idp(['users', 'list'])).stdout).not.toContain('argon2');
    expectOneLine(await idp(['users', 'unlock', 'nobody']), 1, /^no user named nobody$/);
    expect((await idp(['users', 'remove', 'alice'])).code).toBe(0);
    expect(await runSql(db.url, `SELECT count(*)::int AS n FROM users`)).toStrictEqual([{ n: 0 }]);
  });

  it('reads the password from stdin with --password-stdin and holds every way in to the password policy', async () => {
    const piped = json<{ sub: string }>(await idp(['users', 'add', '--username', 'pat', '--password-stdin', '--json'], 'violet orchestra lantern 2031\nignored\n'));
    const [row] = await runSql<{ password_hash: string }>(db.url, `SELECT password_hash FROM users WHERE username = 'pat'`);
    const { verifyPassword } = await import('../../src/sources/passwords.ts');
    expect(await verifyPassword(row?.password_hash ?? '', 'violet orchestra lantern 2031')).toBe(true);
    expect(piped.sub).toBeTruthy();
    const weak: Array<[string[], string | undefined, RegExp]> = [
      [['--username', 'quinn', '--password', 'short pw 11'], undefined, /^password of quinn refused: Use at least 12 characters\.$/],
      [['--username', 'quinn', '--password', 'quinn the eskimo 1968'], undefined, /^password of quinn refused: Do not use your username/],
      [['--username', 'quinn', '--password', 'passwordpassword'], undefined, /^password of quinn refused: This password is too common/],
      [['--username', 'quinn', '--password-stdin'], '1qaz2wsx3edc4rfv\n', /^password of quinn refused: This password is too common/],
    ];
    for (const [flags, stdin, message] of weak) expectOneLine(await idp(['users', 'add', ...flags], stdin), 1, message);
    expectOneLine(await idp(['users', 'add', '--username', 'quinn', '--password-stdin'], '\n'), 2, /^--password-stdin: the first line of stdin must not be empty$/);
    expectOneLine(await idp(['users', 'add', '--username', 'quinn', '--password', 'violet orchestra lantern 2031', '--password-stdin']), 2, /^give --password or --password-stdin, not both/);
    expect(await runSql(db.url, `SELECT username FROM users WHERE username = 'quinn'`)).toStrictEqual([]);
    expect((await idp(['users', 'remove', 'pat'])).code).toBe(0);
  });

  it('adds, lists and removes API scopes; refuses reserved and malformed names', async () => {
    expect((await idp(['scopes', 'add', 'orders.read'])).code).toBe(0);
    expectOneLine(await idp(['scopes', 'add', 'openid']), 1, /reserved/);
    expect(json(await idp(['scopes', 'list', '--json']))).toStrictEqual({ api_scopes: ['orders.read'] });
    expectOneLine(await idp(['scopes', 'remove', 'orders.write']), 1, /^no API scope named orders.write$/);
    expect((await idp(['scopes', 'remove', 'orders.read'])).code).toBe(0);
    expect(await runSql(db.url, `SELECT name FROM api_scopes`)).toStrictEqual([]);
  });

  it('rotates signing keys, refuses to retire the current one, and the previous one unless forced', async () => {
    const first = await idp(['keys', 'rotate']);
    const firstKid = /new current signing key: (\S+)/.exec(first.stdout)?.[1];
    expect(first.code).toBe(0);
    const second = json<{ kid: string; state: string }>(await idp(['keys', 'rotate', '--json']));
    expect(second.state).toBe('current');
    expect(second.kid).not.toBe(firstKid);
    expectOneLine(await idp(['keys', 'retire', second.kid]), 1, /rotate first/);
    expectOneLine(await idp(['keys', 'retire', 'no-such-kid']), 1, /^no signing key with kid no-such-kid$/);
    // A thumbprint starts with a dash one time in 64, with two one time in 4096: a key id, not a flag.
    expectOneLine(await idp(['keys', 'retire', '-Qz4aBc']), 1, /^no signing key with kid -Qz4aBc$/);
    expectOneLine(await idp(['keys', 'retire', '--Nt_ewKH-3-hmXMANO71solbmZ-t8Cm-8hmdSrUv3c']), 1, /^no signing key with kid --Nt_ewKH-3-hmXMANO71solbmZ-t8Cm-8hmdSrUv3c$/);
    // It signed until a moment ago: its tokens may still be valid, so only --force retires it.
    expectOneLine(await idp(['keys', 'retire', firstKid ?? '']), 1, /^signing key \S+ may still verify tokens until \S+Z \(it signed until /);
    expect((await idp(['keys', 'retire', firstKid ?? '', '--force'])).code).toBe(0);
    const listed = json<{ keys: { kid: string; state: string }[] }>(await idp(['keys', 'list', '--json']));
    expect(listed.keys.map(({ kid, state }) => ({ kid, state }))).toStrictEqual([
      { kid: firstKid, state: 'retired' },
      { kid: second.kid, state: 'current' },
    ]);
  });
});

const SEED = {
  api_scopes: ['orders.read'],
  clients: [{
    client_id: 'shop', client_secret: 'shop-secret-0123456789abcdefghijklmnop', secret_expires_at: null,
    display_name: 'Web shop', grant_types: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'orders.read'], redirect_uris: ['https://shop.example/callback'], cors_origins: ['https://shop.example'],
  }, { client_id: 'spa', redirect_uris: ['http://localhost:5173/cb'] }],
  users: [{
    username: 'carol', password: 'correct horse battery staple', given_name: 'Carol', email: 'carol@example.com',
    email_verified: true, roles: ['buyer'], totp_secret: 'JBSWY3DPEHPK3PXP',
  }],
};

describe.runIf(postgresAvailable)('idp seed on PostgreSQL', () => {
  let db: TestDatabase;
  const dir = tempDir();
  const idp = (args: string[]) => runIdp(args, { IDP_SECRET, IDP_DATA_DIR: dir.path, DATABASE_URL: db.url });
  const seedFile = (name: string, content: unknown) => {
    const path = join(dir.path, name);
    writeFileSync(path, JSON.stringify(content));
    return path;
  };
  const snapshot = async () => ({
    clients: await runSql(db.url, `SELECT c::text AS row FROM clients c ORDER BY client_id`),
    users: await runSql(db.url, `SELECT u::text AS row FROM users u ORDER BY id`),
    api_scopes: await runSql(db.url, `SELECT s::text AS row FROM api_scopes s ORDER BY name`),
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    expect((await idp(['migrate'])).code).toBe(0);
  });
  afterAll(async () => {
    await db?.drop();
    dir.remove();
  });

  it('refuses a file with wrong fields whole, naming every path, and writes nothing', async () => {
    const bad = {
      api_scopes: ['orders.read', 'profile'],
      clients: [{ ...SEED.clients[0], redirect_uris: ['https://ok.example/cb', 'https://bad.example/cb#frag'], post_logout_redirect_uris: ['data:text/html,bye'], grant_types: ['password'], colour: 'red' }],
      users: [{ password: 'x', totp_secret: 'not base32!' }],
    };
    const result = await idp(['seed', seedFile('bad.json', bad)]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toStrictEqual([
      'api_scopes[1]: profile is reserved by the service',
      'clients[0].grant_types[0]: must be one of authorization_code, refresh_token, client_credentials',
      'clients[0].redirect_uris[1]: must be an https URI, an http URI on a loopback address, or a private-use scheme with a period (com.example.app:/callback), without a fragment',
      'clients[0].post_logout_redirect_uris[0]: must be an https URI, an http URI on a loopback address, or a private-use scheme with a period (com.example.app:/callback), without a fragment',
      'clients[0].colour: unknown field',
      'users[0].username: required',
      'users[0].totp_secret: must be base32 (RFC 4648 alphabet A-Z and 2-7, at least 16 characters)',
      expect.stringMatching(/bad\.json refused: 7 wrong field\(s\); nothing was written$/),
    ]);
    expect(await snapshot()).toStrictEqual({ clients: [], users: [], api_scopes: [] });
  });

  it('refuses a client_secret shorter than 32 characters', async () => {
    const short = { clients: [{ client_id: 'shop', client_secret: 'too-short' }] };
    const result = await idp(['seed', seedFile('short.json', short)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('clients[0].client_secret: must be at least 32 characters');
    expect(await snapshot()).toStrictEqual({ clients: [], users: [], api_scopes: [] });
  });

  it('seeds, and applying the same file again changes nothing', async () => {
    const path = seedFile('seed.json', SEED);
    const first = await idp(['seed', path]);
    expect({ code: first.code, stdout: first.stdout }).toStrictEqual({
      code: 0, stdout: 'client shop: created\nclient spa: created\nuser carol: created\nclients: 2 created, 0 updated, 0 unchanged; users: 1 created, 0 updated, 0 unchanged; api scopes: 1 created, 0 unchanged\n',
    });
    const rows = await snapshot();
    expect(rows.clients).toHaveLength(2);
    const second = json(await idp(['seed', path, '--json']));
    expect(second).toStrictEqual({
      clients: { created: 0, updated: 0, unchanged: 2 },
      users: { created: 0, updated: 0, unchanged: 1 },
      api_scopes: { created: 0, unchanged: 1 },
      records: [],
    });
    expect(await snapshot()).toStrictEqual(rows);
  });

  it('stores what the file says: defaults, a public client, a sealed TOTP secret', async () => {
    const [spa] = await runSql(db.url, `SELECT * FROM clients WHERE client_id = 'spa'`);
    expect(spa).toMatchObject({ secret_hash: null, enabled: true, grant_types: ['authorization_code'], scopes: [], access_token_lifetime: 3600, require_consent: false });
    const [carol] = await runSql<{ id: string; subject: string }>(db.url, `SELECT * FROM users WHERE username = 'carol'`);
    expect(carol?.subject).toBe(carol?.id);
    const factors = await runSql<{ kind: string; secret_sealed: string }>(db.url, 'SELECT kind, secret_sealed FROM user_factors WHERE user_id = $1', [carol?.id]);
    expect(factors).toEqual([{ kind: 'totp', secret_sealed: expect.stringMatching(/^v1\./) }]);
    expect(factors[0]?.secret_sealed).not.toContain('JBSWY3DPEHPK3PXP');
    const shown = await idp(['users', 'show', 'carol', '--json']);
    expect(json(shown)).toMatchObject({ mfa_enrolled: true, locked: false });
    expect(shown.stdout).not.toContain('JBSWY3DPEHPK3PXP');
  });

  it("replaces the user's authenticator app when totp_secret changes, keeps it when the file omits it, removes it on null", async () => {
    const totpOf = async () => runSql<{ secret_sealed: string }>(db.url,
      "SELECT f.secret_sealed FROM user_factors f JOIN users u ON u.id = f.user_id WHERE u.username = 'carol' AND f.kind = 'totp'");
    const [before] = await totpOf();
    const carol = SEED.users[0] as (typeof SEED.users)[number];
    const changed = { ...SEED, users: [{ ...carol, totp_secret: 'KRSXG5CTMVRXEZLUKN2XAZLSKNSWG4TF' }] };
    expect(json(await idp(['seed', seedFile('new-totp.json', changed), '--json']))).toMatchObject({ users: { updated: 1, unchanged: 0 } });
    const after = await totpOf();
    expect(after).toHaveLength(1);
    expect(after[0]?.secret_sealed).not.toBe(before?.secret_sealed);
    const { totp_secret: _omitted, ...withoutTotp } = carol;
    expect(json(await idp(['seed', seedFile('no-totp.json', { ...SEED, users: [withoutTotp] }), '--json']))).toMatchObject({ users: { unchanged: 1 } });
    expect(await totpOf(), 'an omitted totp_secret keeps the stored one').toEqual(after);
    expect(json(await idp(['seed', seedFile('null-totp.json', { ...SEED, users: [{ ...carol, totp_secret: null }] }), '--json']))).toMatchObject({ users: { updated: 1 } });
    expect(await totpOf()).toEqual([]);
    expect(json(await idp(['users', 'show', 'carol', '--json']))).toMatchObject({ mfa_enrolled: false });
    expect(json(await idp(['seed', seedFile('again.json', SEED), '--json']))).toMatchObject({ users: { updated: 1 } });
    expect(await totpOf()).toHaveLength(1);
  });

  it('updates what changed, and writes nothing when one row is refused by the database', async () => {
    const renamed = { ...SEED, clients: [{ ...SEED.clients[0], display_name: 'Shop' }, SEED.clients[1]] };
    expect(json(await idp(['seed', seedFile('renamed.json', renamed), '--json']))).toMatchObject({ clients: { created: 0, updated: 1, unchanged: 1 } });
    await runSql(db.url, `ALTER TABLE clients ADD CONSTRAINT test_no_evil CHECK (client_id <> 'evil')`);
    const before = await snapshot();
    const partly = { api_scopes: ['orders.write'], clients: [{ client_id: 'fresh' }, { client_id: 'evil' }], users: [{ username: 'dave', password: 'a long enough password 2' }] };
    expectOneLine(await idp(['seed', seedFile('evil.json', partly)]), 1, /^client evil refused by the database: constraint test_no_evil is violated$/);
    expect(await snapshot()).toStrictEqual(before);
  });
});

describe.runIf(postgresAvailable)('API scopes as the running server grants them', () => {
  let db: TestDatabase;
  let server: RunningServer | undefined;
  const dir = tempDir();
  const env = () => ({ IDP_SECRET, IDP_DATA_DIR: dir.path, DATABASE_URL: db.url });
  const idp = (args: string[]) => runIdp(args, env());
  const SERVICE_SECRET = 'service-secret-0123456789abcdefghijklmnop';
  const clientCredentials = async (scope?: string) => {
    const res = await fetch(`${server?.url}/connect/token`, {
      method: 'POST',
      headers: { authorization: basic('svc', SERVICE_SECRET), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    expect((await idp(['migrate'])).code).toBe(0);
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir.remove();
  });

  it('refuses a client scope that is neither standard nor an API scope, in clients add and in seed files (1)', async () => {
    expectOneLine(await idp(['clients', 'add', '--id', 'typo', '--scope', 'openid', '--scope', 'order.read']), 1,
      /^client typo: scope order.read is neither a standard scope nor an API scope \(add it first: idp scopes add order.read\)$/);
    const file = join(dir.path, 'typo.json');
    writeFileSync(file, JSON.stringify({ api_scopes: ['orders.read'], clients: [{ client_id: 'svc', client_secret: SERVICE_SECRET, grant_types: ['client_credentials'], scopes: ['orders.read', 'orders.write'] }] }));
    const refused = await idp(['seed', file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trimEnd().split('\n')).toStrictEqual([
      'clients[0].scopes[1]: scope orders.write is neither a standard scope nor an API scope (add it first: list it in api_scopes, or idp scopes add orders.write)',
      `${file} refused: 1 wrong field(s); nothing was written`,
    ]);
    expect(await runSql(db.url, `SELECT (SELECT count(*)::int FROM clients) AS clients, (SELECT count(*)::int FROM api_scopes) AS scopes`)).toStrictEqual([{ clients: 0, scopes: 0 }]);
  });

  it('stops granting a removed API scope at once, to a client that still lists it', async () => {
    expect((await idp(['scopes', 'add', 'orders.read'])).code).toBe(0);
    expect((await idp(['scopes', 'add', 'orders.write'])).code).toBe(0);
    await seedWith({ clients: [{ client_id: 'svc', client_secret: SERVICE_SECRET, grant_types: ['client_credentials'], scopes: ['orders.read', 'orders.write'] }] }, env());
    server = await startServer(env());
    expect(await clientCredentials('orders.write')).toMatchObject({ status: 200, body: { scope: 'orders.write' } });
    expect((await idp(['scopes', 'remove', 'orders.write'])).code).toBe(0);
    // The notification reaches the server within a second; no restart.
    const deadline = Date.now() + 1000;
    let refused = await clientCredentials('orders.write');
    while (refused.status === 200 && Date.now() < deadline) refused = await clientCredentials('orders.write');
    expect(refused).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });
    expect(await clientCredentials()).toMatchObject({ status: 200, body: { scope: 'orders.read' } });
    expect(await runSql(db.url, `SELECT scopes FROM clients WHERE client_id = 'svc'`)).toStrictEqual([{ scopes: ['orders.read', 'orders.write'] }]);
    // Added back (by SQL this time), it is granted again.
    await runSql(db.url, `INSERT INTO api_scopes (name) VALUES ('orders.write')`);
    let granted = await clientCredentials('orders.write');
    while (granted.status !== 200 && Date.now() < deadline + 2000) granted = await clientCredentials('orders.write');
    expect(granted).toMatchObject({ status: 200, body: { scope: 'orders.write' } });
  });
});

describe('idp beside the development server on the embedded database', () => {
  const dataDir = tempDir();
  let server: RunningServer | undefined;
  const idp = (args: string[], stdin?: string) => runIdp(args, { IDP_SECRET, IDP_DATA_DIR: dataDir.path }, stdin);
  afterAll(async () => {
    await server?.stop();
    dataDir.remove();
  });

  it('adds a client whose tokens the running server then issues, and every command works meanwhile', async () => {
    server = await startServer({ IDP_SECRET, IDP_DATA_DIR: dataDir.path });
    expect(statSync(join(dataDir.path, '.s.PGSQL.5432')).mode & 0o777).toBe(0o600);
    expect((await idp(['scopes', 'add', 'orders.read'])).code).toBe(0);
    const added = json<{ client_secret: string }>(await idp(['clients', 'add', '--id', 'svc', '--grant', 'client_credentials', '--scope', 'orders.read', '--json']));
    const res = await fetch(`${server.url}/connect/token`, {
      method: 'POST',
      headers: { authorization: basic('svc', added.client_secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect({ status: res.status, body: await res.json() }).toMatchObject({ status: 200, body: { scope: 'orders.read', token_type: 'Bearer' } });
    // Disabled from the command line: the running server refuses it at once.
    expect((await idp(['clients', 'disable', 'svc'])).code).toBe(0);
    const refused = await fetch(`${server.url}/connect/token`, {
      method: 'POST',
      headers: { authorization: basic('svc', added.client_secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(refused.status).toBe(401);

    expect((await idp(['users', 'add', '--username', 'pat', '--password-stdin'], 'violet orchestra lantern 2031\n')).code).toBe(0);
    expect(json<{ users: Array<{ username: string }> }>(await idp(['users', 'list', '--json'])).users.map((u) => u.username)).toContain('pat');
    expect(json(await idp(['migrate', '--json']))).toStrictEqual({ applied: [] });
    expect(json<{ keys: unknown[] }>(await idp(['keys', 'list', '--json'])).keys.length).toBeGreaterThan(0);
    const doctor = JSON.parse((await idp(['doctor', '--url', server.url, '--json'])).stdout) as { checks: Array<{ name: string; status: string }> };
    expect(doctor.checks.find((c) => c.name === 'database')?.status).toBe('ok');
  });

  it('rolls back a transaction refused half-way over the socket, and the server and the next command go on', async () => {
    // clients add checks again inside its transaction, and refuses there: a rollback over the socket.
    expectOneLine(await idp(['clients', 'add', '--id', 'svc']), 1, /^client svc already exists$/);
    expect((await fetch(`${server?.url}/readyz`)).status).toBe(200);
    expect(json(await idp(['scopes', 'list', '--json']))).toStrictEqual({ api_scopes: ['demo.read', 'orders.read'] });
  });

  it('stops sharing when the server stops', async () => {
    expect(await server?.stop()).toBe(0);
    expect(existsSync(join(dataDir.path, '.s.PGSQL.5432'))).toBe(false);
    expect(json(await idp(['scopes', 'list', '--json']))).toStrictEqual({ api_scopes: ['demo.read', 'orders.read'] });
  });
});

describe('idp on the embedded database', () => {
  const dataDir = tempDir();
  const idp = (args: string[]) => runIdp(args, { IDP_SECRET, IDP_DATA_DIR: dataDir.path });
  afterAll(() => dataDir.remove());

  // PGlite takes seconds to open in each process: a longer time limit than the default.
  it('works on the embedded database when no server holds it', async () => {
    expect((await idp(['scopes', 'add', 'orders.read'])).code).toBe(0);
    expect(json(await idp(['scopes', 'list', '--json']))).toStrictEqual({ api_scopes: ['orders.read'] });
  });

  it('says the embedded database is in use by a running server (2)', async () => {
    // main.ts compares the lock's pid with its own: the test process is a live process other than idp.
    writeFileSync(join(dataDir.path, 'server.pid'), `${process.pid}\n`);
    expectOneLine(await idp(['scopes', 'list']), 2, /in use/);
    expectOneLine(await idp(['migrate']), 2, /in use/);
  });
});
