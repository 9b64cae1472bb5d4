/**
 * Changing one field of a client or a user, as an operator does it: a partial seed file keeps
 * what it leaves out (`null` clears), and `idp clients update` / `idp users update` change what
 * their flags name. Spawned `idp` commands against one PostgreSQL database, one running server.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../helpers/oauth.ts';
import { runIdp, startServer, tempDir, type RunResult, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'f'.repeat(64);
const SECRET = 'demo-secret-0123456789abcdefghijklmnopq';
const PASSWORD = 'violet orchestra lantern 2031';
const NEW_PASSWORD = 'amber meridian falcon 4417';
const TOTP = 'JBSWY3DPEHPK3PXPJBSWY3DP';

const FULL_CLIENT = {
  client_id: 'demo', client_secret: SECRET, display_name: 'Demo', grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
  scopes: ['openid', 'orders.read'], redirect_uris: ['https://demo.example/cb'], require_consent: true,
};
const FULL_USER = {
  username: 'alice', password: PASSWORD, given_name: 'Alice', family_name: 'Liddell', name: 'Alice Liddell',
  email: 'alice@example.com', email_verified: true, roles: ['admin', 'buyer'], totp_secret: TOTP,
};

function oneLine(result: RunResult, code: number, text: RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toStrictEqual({ code, stdout: '' });
  const lines = result.stderr.trimEnd().split('\n').filter((line) => !line.startsWith('{'));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(text);
}

describe.runIf(postgresAvailable)('changing some fields of a client or a user', () => {
  let db: TestDatabase;
  let server: RunningServer | undefined;
  const dir = tempDir();
  const env = () => ({ IDP_SECRET, IDP_DATA_DIR: dir.path, DATABASE_URL: db.url, LOG_LEVEL: 'info' });
  const idp = (args: string[], stdin?: string) => runIdp(args, env(), stdin);
  const seed = (content: object) => {
    const file = join(dir.path, 'seed.json');
    writeFileSync(file, JSON.stringify(content));
    return idp(['seed', file]);
  };
  const client = async (id = 'demo') => (await runSql(db.url, `SELECT secret_hash, grant_types, scopes, redirect_uris, cors_origins, display_name, require_consent, access_token_lifetime FROM clients WHERE client_id = $1`, [id]))[0];
  const user = async () => (await runSql(db.url, `SELECT id, subject, password_hash, given_name, family_name, name, email, email_verified, phone_number, roles,
    (SELECT secret_sealed FROM user_factors WHERE user_id = users.id AND kind = 'totp') AS totp_secret_sealed FROM users WHERE username = 'alice'`))[0];
  const clientCredentials = async (secret = SECRET) =>
    (await fetch(`${server?.url}/connect/token`, {
      method: 'POST',
      headers: { authorization: basic('demo', secret), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=orders.read',
    })).status;
  const liveFamily = async (userId: string, id: string) => {
    await runSql(db.url, `
      INSERT INTO refresh_token_families (id, client_id, user_id, scopes, auth_time, amr, expires_at, token_salt, token_expires_at, access_expires_at)
      VALUES ($1, 'demo', $2, '{openid}', now(), '{pwd}', now() + interval '1 day', '\\x00', now() + interval '1 day', now() + interval '1 hour')`, [id, userId]);
  };
  const familyReason = async (id: string) => (await runSql<{ revoked_reason: string | null }>(db.url, `SELECT revoked_reason FROM refresh_token_families WHERE id = $1`, [id]))[0]?.revoked_reason;

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    expect((await idp(['migrate'])).code).toBe(0);
    expect((await seed({ api_scopes: ['orders.read'], clients: [FULL_CLIENT], users: [FULL_USER] })).code).toBe(0);
    server = await startServer(env());
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir.remove();
  });

  it('keeps a confidential client confidential when a partial seed file adds a redirect URI', async () => {
    const before = await client();
    const result = await seed({ clients: [{ client_id: 'demo', redirect_uris: ['https://demo.example/cb', 'https://demo.example/cb2'] }] });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toContain('client demo: redirect_uris');
    expect(await client()).toStrictEqual({ ...before, redirect_uris: ['https://demo.example/cb', 'https://demo.example/cb2'] });
    expect(await clientCredentials()).toBe(200);
    const audit = result.stderr.split('\n').filter((l) => l.includes('"admin_change"')).map((l) => JSON.parse(l) as { fields: string[] });
    expect(audit.map((a) => a.fields)).toStrictEqual([['clients.redirect_uris']]);
    // The same file again changes nothing.
    const again = await seed({ clients: [{ client_id: 'demo', redirect_uris: ['https://demo.example/cb', 'https://demo.example/cb2'] }] });
    expect(again.stdout.trim()).toBe('clients: 0 created, 0 updated, 1 unchanged; users: 0 created, 0 updated, 0 unchanged; api scopes: 0 created, 0 unchanged');
  });

  it('keeps a user\'s profile, roles and second factor when a seed file gives only a new password, and revokes their tokens', async () => {
    const before = await user();
    expect(before?.totp_secret_sealed).toEqual(expect.any(String));
    await liveFamily(before?.id as string, 'alice-family');
    const result = await seed({ users: [{ username: 'alice', password: NEW_PASSWORD }] });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n')).toContain('user alice: password');
    const after = await user();
    expect({ ...after, password_hash: undefined }).toStrictEqual({ ...before, password_hash: undefined });
    expect(after?.password_hash).not.toBe(before?.password_hash);
    expect(await familyReason('alice-family')).toBe('password changed');
    const json = await idp(['seed', join(dir.path, 'seed.json'), '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ users: { unchanged: 1 }, records: [] });
    // The TOTP secret already stored is kept as it is; another one replaces the factor.
    expect((await seed({ users: [{ username: 'alice', totp_secret: TOTP }] })).stdout).toContain('users: 0 created, 0 updated, 1 unchanged');
    expect((await user())?.totp_secret_sealed).toBe(before?.totp_secret_sealed);
    expect((await seed({ users: [{ username: 'alice', totp_secret: 'KRSXG5CTMVRXEZLU' }] })).stdout.split('\n')).toContain('user alice: totp_secret');
    expect((await user())?.totp_secret_sealed).not.toBe(before?.totp_secret_sealed);
  });

  it('clears a field given as null, names what changed, and refuses a client made public that keeps client_credentials', async () => {
    const refused = await seed({ clients: [{ client_id: 'demo', client_secret: null }] });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('clients[0].grant_types: a public client cannot use the client_credentials grant');
    expect(await clientCredentials()).toBe(200);
    const result = await seed({
      clients: [{ client_id: 'demo', client_secret: null, grant_types: ['authorization_code'], cors_origins: null }],
      users: [{ username: 'alice', email: null, roles: null, totp_secret: null }],
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split('\n').slice(0, 2)).toStrictEqual(['client demo: client_secret, grant_types', 'user alice: email, email_verified, roles, totp_secret']);
    expect(await client()).toMatchObject({ secret_hash: null, grant_types: ['authorization_code'], scopes: ['openid', 'orders.read'] });
    // An address cleared is no longer verified either.
    expect(await user()).toMatchObject({ email: null, email_verified: false, roles: [], totp_secret_sealed: null, name: 'Alice Liddell' });
  });

  it('changes a client through idp clients update, each flag family, and prints what changed', async () => {
    expect((await seed({ clients: [{ ...FULL_CLIENT, client_id: 'web', grant_types: ['authorization_code'] }] })).code).toBe(0);
    const result = await idp(['clients', 'update', 'web', '--name', 'Web shop', '--add-redirect-uri', 'https://web.example/cb', '--remove-redirect-uri', 'https://demo.example/cb',
      '--add-cors-origin', 'https://web.example', '--add-post-logout-redirect-uri', 'https://web.example/', '--remove-scope', 'orders.read', '--add-grant', 'refresh_token',
      '--access-token-lifetime', '600', '--no-require-consent', '--secret-expires-at', '2031-01-31']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('client web: secret_expires_at, display_name, grant_types, scopes, redirect_uris, post_logout_redirect_uris, cors_origins, access_token_lifetime, require_consent');
    expect(await client('web')).toMatchObject({ display_name: 'Web shop', grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid'], redirect_uris: ['https://web.example/cb'],
      cors_origins: ['https://web.example'], access_token_lifetime: 600, require_consent: false });
    expect((await client('web'))?.secret_hash).not.toBeNull();
    expect((await runSql(db.url, `SELECT secret_expires_at FROM clients WHERE client_id = 'web'`))[0]).toStrictEqual({ secret_expires_at: new Date('2031-01-31T00:00:00Z') });
    const json = JSON.parse((await idp(['clients', 'update', 'web', '--add-scope', 'orders.read', '--json'])).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({ client_id: 'web', client_type: 'confidential', scopes: ['openid', 'orders.read'], changed: ['scopes'] });
  });

  it('changes a user through idp users update without a new sub, and a new password revokes their tokens', async () => {
    const before = await user();
    await liveFamily(before?.id as string, 'alice-family-2');
    const result = await idp(['users', 'update', 'alice', '--email', 'a@example.org', '--no-email-verified', '--phone', '+15555550100', '--role', 'ops', '--given-name', 'Al'], undefined);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('user alice: given_name, name, email, phone_number, roles');
    expect(await user()).toMatchObject({ subject: before?.subject, given_name: 'Al', name: expect.stringMatching(/^Al /), email: 'a@example.org', email_verified: false, phone_number: '+15555550100', roles: ['ops'] });
    expect(await familyReason('alice-family-2')).toBeNull();
    const roles = await idp(['users', 'update', 'alice', '--add-role', 'audit', '--remove-role', 'ops', '--json']);
    expect(JSON.parse(roles.stdout)).toMatchObject({ username: 'alice', roles: ['audit'], changed: ['roles'] });
    const password = await idp(['users', 'update', 'alice', '--password-stdin'], `${PASSWORD}\n`);
    expect(password.stdout.trim()).toBe('user alice: password');
    expect(await familyReason('alice-family-2')).toBe('password changed');
  });

  it('refuses an unknown record (1), no change or a bad flag (2), and a change that breaks a rule (1), writing nothing', async () => {
    const before = await client('web');
    // Independent refusals, spawned side by side to keep the run short.
    const [noClient, noUser, noClientChange, noUserChange, badUri, badEmail, publicCc, unknownScope, weakPassword] = await Promise.all([
      idp(['clients', 'update', 'nobody', '--name', 'x']),
      idp(['users', 'update', 'nobody', '--email', 'n@example.org']),
      idp(['clients', 'update', 'web']),
      idp(['users', 'update', 'alice']),
      idp(['clients', 'update', 'web', '--add-redirect-uri', 'http://evil.example/cb']),
      idp(['users', 'update', 'alice', '--email', 'not-an-email']),
      idp(['clients', 'update', 'demo', '--add-grant', 'client_credentials']),
      idp(['clients', 'update', 'web', '--add-scope', 'orders.write']),
      idp(['users', 'update', 'alice', '--password-stdin'], 'alice\n'),
    ]);
    oneLine(noClient, 1, /^no client with id nobody$/);
    oneLine(noUser, 1, /^no user named nobody$/);
    oneLine(noClientChange, 2, /^no change given/);
    oneLine(noUserChange, 2, /^no change given/);
    oneLine(badUri, 2, /^--add-redirect-uri "http:\/\/evil.example\/cb": must be an https URI/);
    oneLine(badEmail, 2, /^--email "not-an-email": must be a bare email address such as nina@example.com, without a display name, brackets or spaces$/);
    oneLine(publicCc, 1, /^client demo: grant_types a public client cannot use the client_credentials grant$/);
    oneLine(unknownScope, 1, /^client web: scope orders.write is neither a standard scope nor an API scope/);
    oneLine(weakPassword, 1, /^password of alice refused/);
    const newUser = await seed({ users: [{ username: 'newbie', email: 'n@example.org' }] });
    expect(newUser.code).toBe(1);
    expect(newUser.stderr).toContain('users[0].password: required for a new user');
    expect(await client('web')).toStrictEqual(before);
    const help = await idp(['users', 'update', '--help']);
    expect(help.stdout).toContain('--password-stdin');
    expect((await idp(['--help'])).stdout).toMatch(/clients update ID[\s\S]*users update U/);
  });

  it('takes a bare email address only, from idp users add, idp users update and a seed file; a new address is not verified unless said so', async () => {
    const hostile = '<attacker@evil.example>nina';
    const [added, updated, seeded] = await Promise.all([
      idp(['users', 'add', '--username', 'nina', '--password', PASSWORD, '--email', hostile]),
      idp(['users', 'update', 'alice', '--email', 'Alice <alice@example.com>']),
      seed({ users: [{ username: 'nina', password: PASSWORD, email: 'nina@example.com,attacker@evil.example' }] }),
    ]);
    oneLine(added, 2, /^--email "<attacker@evil.example>nina": must be a bare email address/);
    oneLine(updated, 2, /^--email "Alice <alice@example.com>": must be a bare email address/);
    expect(seeded.code).toBe(1);
    expect(seeded.stderr).toContain('users[0].email: must be a bare email address');
    expect(await runSql(db.url, `SELECT 1 FROM users WHERE username = 'nina'`)).toStrictEqual([]);
    expect((await idp(['users', 'update', 'alice', '--email', 'alice@example.com', '--email-verified'])).code).toBe(0);
    expect(await user()).toMatchObject({ email: 'alice@example.com', email_verified: true });
    const moved = await idp(['users', 'update', 'alice', '--email', 'alice@elsewhere.example']);
    expect(moved.stdout.trim()).toBe('user alice: email, email_verified');
    expect(await user()).toMatchObject({ email: 'alice@elsewhere.example', email_verified: false });
  });
});
