/**
 * The administration API's users, signing keys and lists, in process: a user's life (created
 * under the password policy, found by sub and by username, locked with the command line's
 * eviction, a new password ending their tokens, removed), keys without a private member, and
 * pages that neither skip nor repeat while rows come and go.
 */
import { hash as bcrypt } from '@node-rs/bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkce } from '../helpers/oauth.ts';
import { Browser, authorizeThroughPages, codeFrom, codeRequest, introspect, redeem, userinfo } from '../helpers/relying-party.ts';
import { ADMIN_SECRET, ALICE, adminChanges, call, isProblem, startAdminApp, tokenFor, type AdminSetup, type Answer } from '../e2e/admin-api-support.ts';

const WEB = { clientId: 'web', secret: 'web-secret-0123456789abcdefghijklmnop' };
const WEB_REDIRECT = 'https://rp.test/cb';

describe('administration API: users, keys, pages', () => {
  let s: AdminSetup;
  let token: string;
  const url = (path: string) => `${s.api}${path}`;

  beforeAll(async () => {
    s = await startAdminApp({ LOG_LEVEL: 'info' });
    token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
  });
  afterAll(async () => {
    await s?.stop();
  });

  async function aliceAccessToken(): Promise<string> {
    const { verifier, challenge } = pkce();
    const page = await authorizeThroughPages(new Browser(), s.base, codeRequest(s.base, 'web', WEB_REDIRECT, challenge), ALICE);
    const redeemed = await redeem(s.base, codeFrom(page, WEB_REDIRECT, `${s.base}/`), WEB_REDIRECT, verifier, WEB);
    return String(redeemed.body.access_token);
  }

  it('creates a user under the password policy, finds them by sub and by username, never shows a hash', async () => {
    const weak = await call(url('/users'), 'POST', { token, body: { username: 'carol', password: 'carol' } });
    expect(isProblem(weak, 400)).toBe(true);
    expect(weak.body.errors).toEqual([{ pointer: '/password', detail: expect.any(String) }]);
    const hostile = await call(url('/users'), 'POST', { token, body: { username: 'ca\u0000rol', password: 'a long and good password', email: 'not an email', roles: [''], locked: true } });
    expect(hostile.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/email', '/locked', '/roles/0', '/username']);
    expect((await s.sql('SELECT count(*)::int AS n FROM users'))[0]?.n).toBe(1);
    const made = await call(url('/users'), 'POST', { token, body: { username: 'Carol', password: 'a long and good password', given_name: 'Carol', roles: ['ops'] } });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ username: 'carol', given_name: 'Carol', roles: ['ops'], locked: false });
    expect(made.headers.get('location')).toBe(`/admin/v1/users/${made.body.sub}`);
    expect(JSON.stringify(made.body)).not.toMatch(/argon2|"password"|password_hash/);
    expect(isProblem(await call(url('/users'), 'POST', { token, body: { username: 'CAROL ', password: 'a long and good password' } }), 409)).toBe(true);
    const found = await call(url('/users?username=carol'), 'GET', { token });
    expect(found.body.items.map((u: { sub: string }) => u.sub)).toEqual([made.body.sub]);
    expect((await call(url('/users?username=nobody'), 'GET', { token })).body).toEqual({ items: [], next_cursor: null });
    expect((await call(url(`/users/${made.body.sub}`), 'GET', { token })).headers.get('etag')).toBe(made.headers.get('etag'));
    expect(isProblem(await call(url('/users/nobody'), 'GET', { token }), 404)).toBe(true);
  });

  it('keeps name following given_name and family_name, unless it was set on its own', async () => {
    const made = await call(url('/users'), 'POST', { token, body: { username: 'nina', password: 'a long and good password', given_name: 'Nina', family_name: 'Holt' } });
    expect(made.body).toMatchObject({ name: 'Nina Holt' });
    const patch = async (body: object, etag: string) => call(url(`/users/${made.body.sub}`), 'PATCH', { token, body, headers: { 'if-match': etag } });
    const renamed = await patch({ given_name: 'Ninette' }, made.headers.get('etag') as string);
    expect(renamed.body).toMatchObject({ given_name: 'Ninette', name: 'Ninette Holt' });
    const own = await patch({ name: 'Nin' }, renamed.headers.get('etag') as string);
    expect(own.body).toMatchObject({ name: 'Nin' });
    const kept = await patch({ family_name: 'Holt-Berg' }, own.headers.get('etag') as string);
    expect(kept.body).toMatchObject({ family_name: 'Holt-Berg', name: 'Nin' });
    expect(adminChanges(s.logs())).toContainEqual(expect.objectContaining({ resource_id: made.body.sub, fields: ['given_name', 'name'] }));
  });

  it('creates a user from a bcrypt password_hash: refused out of bounds by pointer, never shown; the first sign-in makes it argon2id', async () => {
    const hash = await bcrypt('dinah the cat 1865', 4);
    const costly = await call(url('/users'), 'POST', { token, body: { username: 'dinah', password_hash: hash.replace('$2b$04$', '$2b$16$') } });
    expect(isProblem(costly, 400)).toBe(true);
    expect(costly.body.errors).toEqual([{ pointer: '/password_hash', detail: expect.stringMatching(/bcrypt cost of 16/) }]);
    const both = await call(url('/users'), 'POST', { token, body: { username: 'dinah', password: 'a long and good password', password_hash: hash } });
    expect(both.body.errors).toEqual([{ pointer: '/password_hash', detail: 'give password or password_hash, not both' }]);
    const made = await call(url('/users'), 'POST', { token, body: { username: 'dinah', password_hash: hash } });
    expect(made.status).toBe(201);
    expect(JSON.stringify(made.body)).not.toContain(hash.slice(7));
    expect(s.logs()).not.toContain(hash.slice(7));
    const stored = async () => String((await s.sql('SELECT password_hash FROM users WHERE username = $1', ['dinah']))[0]?.password_hash);
    expect(await stored()).toBe(hash);
    const { challenge } = pkce();
    const page = await authorizeThroughPages(new Browser(), s.base, codeRequest(s.base, 'web', WEB_REDIRECT, challenge), { username: 'dinah', password: 'dinah the cat 1865' });
    codeFrom(page, WEB_REDIRECT, `${s.base}/`);
    expect(await stored()).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('locks a user with If-Match: their tokens end at once, as with idp users lock; a factor change moves the ETag', async () => {
    const access = await aliceAccessToken();
    expect((await userinfo(s.base, access)).status).toBe(200);
    const [alice] = (await call(url('/users?username=alice'), 'GET', { token })).body.items as { sub: string }[];
    const read = await call(url(`/users/${alice?.sub}`), 'GET', { token });
    const etag = read.headers.get('etag') as string;
    expect(isProblem(await call(url(`/users/${alice?.sub}`), 'PATCH', { token, body: { locked: true } }), 428)).toBe(true);
    const locked = await call(url(`/users/${alice?.sub}`), 'PATCH', { token, body: { locked: true, roles: null }, headers: { 'if-match': etag } });
    expect(locked.status).toBe(200);
    expect(locked.body).toMatchObject({ locked: true, roles: [] });
    expect((await userinfo(s.base, access)).status).toBe(401);
    expect(adminChanges(s.logs())).toContainEqual(expect.objectContaining({ resource: 'user', resource_id: alice?.sub, fields: ['roles', 'locked'], client_id: 'automation' }));
    const unlocked = await call(url(`/users/${alice?.sub}`), 'PATCH', { token, body: { locked: false }, headers: { 'if-match': locked.headers.get('etag') as string } });
    expect(unlocked.status).toBe(200);
    const id = (await s.sql('SELECT id FROM users WHERE username = $1', ['alice']))[0]?.id;
    await s.sql("INSERT INTO user_factors (user_id, kind, name, secret_hash) VALUES ($1, 'recovery_code', 'code 1', 'h1')", [id]);
    const withFactor = (await call(url(`/users/${alice?.sub}`), 'GET', { token })).headers.get('etag');
    expect(withFactor).not.toBe(unlocked.headers.get('etag'));
    await s.sql('DELETE FROM user_factors WHERE user_id = $1', [id]);
    expect((await call(url(`/users/${alice?.sub}`), 'GET', { token })).headers.get('etag')).not.toBe(withFactor);
    expect(isProblem(await call(url(`/users/${alice?.sub}`), 'PATCH', { token, body: { locked: true }, headers: { 'if-match': unlocked.headers.get('etag') as string } }), 412)).toBe(true);
  });

  it('ends the tokens on an explicit set of the current password too (README: setting a password ends them)', async () => {
    const access = await aliceAccessToken();
    expect((await introspect(s.base, WEB, access)).body).toMatchObject({ active: true });
    const [alice] = (await call(url('/users?username=alice'), 'GET', { token })).body.items as { sub: string }[];
    const etag = (await call(url(`/users/${alice?.sub}`), 'GET', { token })).headers.get('etag') as string;
    const same = await call(url(`/users/${alice?.sub}/password`), 'PUT', { token, body: { password: ALICE.password }, headers: { 'if-match': etag } });
    expect(same.status).toBe(200);
    expect(same.headers.get('etag')).not.toBe(etag);
    expect((await userinfo(s.base, access)).status).toBe(401);
    expect((await introspect(s.base, WEB, access)).body).toStrictEqual({ active: false });
    expect(adminChanges(s.logs())).toContainEqual(expect.objectContaining({ action: 'update', resource: 'user', resource_id: alice?.sub, fields: ['password'] }));
  });

  it('sets a password (policy, If-Match) and ends the tokens; removes a user (428, 204, 404)', async () => {
    const access = await aliceAccessToken();
    const [alice] = (await call(url('/users?username=alice'), 'GET', { token })).body.items as { sub: string }[];
    const etag = (await call(url(`/users/${alice?.sub}`), 'GET', { token })).headers.get('etag') as string;
    const weak = await call(url(`/users/${alice?.sub}/password`), 'PUT', { token, body: { password: 'alice' }, headers: { 'if-match': etag } });
    expect(isProblem(weak, 400)).toBe(true);
    expect((await userinfo(s.base, access)).status).toBe(200);
    const set = await call(url(`/users/${alice?.sub}/password`), 'PUT', { token, body: { password: 'a brand new passphrase' }, headers: { 'if-match': etag } });
    expect(set.status).toBe(200);
    expect((await userinfo(s.base, access)).status).toBe(401);
    expect(isProblem(await call(url(`/users/${alice?.sub}`), 'DELETE', { token }), 428)).toBe(true);
    expect((await call(url(`/users/${alice?.sub}`), 'DELETE', { token, headers: { 'if-match': set.headers.get('etag') as string } })).status).toBe(204);
    expect(isProblem(await call(url(`/users/${alice?.sub}`), 'GET', { token }), 404)).toBe(true);
  });

  it('lists, rotates and retires signing keys, never with a private member', async () => {
    const rotated = await call(url('/keys/rotate'), 'POST', { token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.state).toBe('current');
    const keys = (await call(url('/keys'), 'GET', { token })).body.items as { kid: string; state: string; public_jwk: Record<string, unknown> }[];
    expect(keys.map((k) => k.state).sort()).toEqual(['current', 'previous']);
    for (const key of keys) expect(Object.keys(key.public_jwk).sort()).toEqual(['e', 'kty', 'n'].filter((m) => m in key.public_jwk).sort());
    expect(JSON.stringify(keys)).not.toMatch(/"(d|p|q|dp|dq|qi)":/);
    expect(isProblem(await call(url(`/keys/${rotated.body.kid}/retire`), 'POST', { token }), 409)).toBe(true);
    const previous = keys.find((k) => k.state === 'previous');
    expect(isProblem(await call(url(`/keys/${previous?.kid}/retire`), 'POST', { token }), 409)).toBe(true);
    const forced = await call(url(`/keys/${previous?.kid}/retire`), 'POST', { token, body: { force: true } });
    expect(forced.status).toBe(200);
    expect(forced.body.state).toBe('retired');
    // The caller's own token was signed by the key retired by force: it stopped verifying at once.
    expect(isProblem(await call(url('/keys'), 'GET', { token }), 401)).toBe(true);
    token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
    expect(isProblem(await call(url('/keys/nokey/retire'), 'POST', { token }), 404)).toBe(true);
    expect(s.logs()).toMatch(/"event":"key_rotated"[^\n]*"actor":"api"/);
  });

  it('pages through a list while rows are added and removed: no row skipped or repeated, and the end comes', async () => {
    await s.sql("INSERT INTO users (id, subject, username) SELECT 'p' || lpad(i::text, 3, '0'), 'p' || lpad(i::text, 3, '0'), 'pager' || i FROM generate_series(10, 40) i");
    const start = new Set((await s.sql("SELECT id FROM users WHERE id LIKE 'p%'")).map((r) => String(r.id)));
    const seen: string[] = [];
    const removed = new Set<string>();
    let next: string | null = `${s.api}/users?limit=7`;
    let pages = 0;
    while (next !== null) {
      const page: Answer = await call(next, 'GET', { token });
      expect(page.status).toBe(200);
      seen.push(...(page.body.items as { id: string }[]).map((u) => u.id));
      const link = page.headers.get('link');
      next = page.body.next_cursor === null ? null : `${s.base}${/^<([^>]+)>; rel="next"$/.exec(link ?? '')?.[1]}`;
      if (page.body.next_cursor === null) expect(link).toBeNull();
      pages += 1;
      if (pages === 2) {
        // Behind the cursor and ahead of it (in username order): one added, one removed on each side.
        await s.sql("INSERT INTO users (id, subject, username) VALUES ('p001', 'p001', 'early'), ('p999', 'p999', 'pager99')");
        await s.sql("DELETE FROM users WHERE id IN ('p010', 'p035')");
        removed.add('p035');
      }
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of start) if (!removed.has(id)) expect(seen).toContain(id);
    expect(seen).toContain('p999');
    expect(seen).not.toContain('p035');
    expect(pages).toBeGreaterThan(4);
  });
});
