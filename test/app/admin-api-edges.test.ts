/**
 * The edges of the administration API an adversarial review found (issue 51, items 7-10), in
 * process: email addresses that are nothing but an address, an address changed without a word
 * on its verification no longer counts as verified, usernames that only look like another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkce } from '../helpers/oauth.ts';
import { Browser, authorizeThroughPages, codeFrom, codeRequest, redeem } from '../helpers/relying-party.ts';
import { ADMIN_SECRET, ALICE, HOOKS_SECRET, READER_SECRET, call, isProblem, startAdminApp, tokenFor, type AdminSetup } from '../e2e/admin-api-support.ts';

const PASSWORD = 'a long and good password';

describe('administration API: the edges of users', () => {
  let s: AdminSetup;
  let token: string;
  const url = (path: string) => `${s.api}${path}`;

  beforeAll(async () => {
    s = await startAdminApp();
    token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
  });
  afterAll(async () => {
    await s?.stop();
  });

  /** A PATCH at the user's current version (If-Match). */
  async function patchUser(sub: string, body: Record<string, unknown>) {
    const etag = (await call(url(`/users/${sub}`), 'GET', { token })).headers.get('etag') as string;
    return call(url(`/users/${sub}`), 'PATCH', { token, body, headers: { 'if-match': etag } });
  }

  it('refuses an email address with a display name, a list or brackets, on create and on change', async () => {
    for (const email of ['<attacker@evil.example>nina', 'Nina <nina@example.com>', 'nina@example.com,attacker@evil.example', '"nina"@example.com', 'nina@example.com;x', 'nina(x)@example.com']) {
      const made = await call(url('/users'), 'POST', { token, body: { username: 'nina', password: PASSWORD, email } });
      expect(isProblem(made, 400), email).toBe(true);
      expect(made.body.errors, email).toEqual([{ pointer: '/email', detail: expect.stringMatching(/bare email address/) }]);
    }
    const nina = await call(url('/users'), 'POST', { token, body: { username: 'nina', password: PASSWORD, email: 'nina@example.com', email_verified: true } });
    expect(nina.status).toBe(201);
    const patched = await patchUser(nina.body.sub, { email: '<attacker@evil.example>nina' });
    expect(isProblem(patched, 400)).toBe(true);
    expect((await s.sql('SELECT email FROM users WHERE subject = $1', [nina.body.sub]))[0]?.email).toBe('nina@example.com');
  });

  it('makes a changed address unverified unless the same change says it is verified', async () => {
    const made = await call(url('/users'), 'POST', { token, body: { username: 'olga', password: PASSWORD, email: 'olga@example.com', email_verified: true } });
    expect(made.body.email_verified).toBe(true);
    const moved = await patchUser(made.body.sub, { email: 'olga@elsewhere.example' });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ email: 'olga@elsewhere.example', email_verified: false });
    const vouched = await patchUser(made.body.sub, { email: 'olga@example.com', email_verified: true });
    expect(vouched.body).toMatchObject({ email: 'olga@example.com', email_verified: true });
    const renamed = await patchUser(made.body.sub, { given_name: 'Olga', email: 'olga@example.com' });
    expect(renamed.body).toMatchObject({ email: 'olga@example.com', email_verified: true });
  });

  it('takes a fullwidth spelling of a username as the name it looks like, and refuses one holding an invisible character', async () => {
    for (const username of ['alice\u200b', 'al\u00adice', 'ali\u2060ce', 'zo\u200de', '\ufeffzoe']) {
      const made = await call(url('/users'), 'POST', { token, body: { username, password: PASSWORD } });
      expect(isProblem(made, 400), JSON.stringify(username)).toBe(true);
      expect(made.body.errors, JSON.stringify(username)).toEqual([{ pointer: '/username', detail: expect.stringMatching(/show as nothing/) }]);
    }
    expect(isProblem(await call(url('/users'), 'POST', { token, body: { username: '\uff41lice', password: PASSWORD } }), 409)).toBe(true);
    const zoe = await call(url('/users'), 'POST', { token, body: { username: '\uff3a\uff4fe', password: PASSWORD } });
    expect([zoe.status, zoe.body.username]).toStrictEqual([201, 'zoe']);
    expect((await call(url('/users?username=zoe'), 'GET', { token })).body.items).toHaveLength(1);
    // Signing in with the fullwidth spelling is signing in as the account it looks like.
    const { verifier, challenge } = pkce();
    const redirect = 'https://rp.test/cb';
    const page = await authorizeThroughPages(new Browser(), s.base, codeRequest(s.base, 'web', redirect, challenge), { ...ALICE, username: '\uff21LICE' });
    const redeemed = await redeem(s.base, codeFrom(page, redirect, `${s.base}/`), redirect, verifier, { clientId: 'web', secret: 'web-secret-0123456789abcdefghijklmnop' });
    expect(redeemed.status).toBe(200);
  });

  it('refuses a webhook URL whose IPv6 address carries a private IPv4 address, a site-local one, or a control character', async () => {
    const hooks = await tokenFor(s.base, 'hooks', HOOKS_SECRET, 'admin_console_webhooks');
    // Outside production (as here) loopback is allowed; a private network never is.
    const refused = ['https://[64:ff9b::a00:1]/in', 'https://[::ffff:0:10.0.0.1]/in', 'https://[2002:a00:1::]/in', 'https://[fec0::1]/in',
      'https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/in', 'https://[64:ff9b::a9fe:a9fe]/in', 'https://hooks.example.com/a\nb'];
    for (const target of refused) {
      const answer = await call(url('/webhooks'), 'POST', { token: hooks, body: { url: target } });
      expect(isProblem(answer, 400), target).toBe(true);
      expect(answer.body.errors, target).toEqual([expect.objectContaining({ pointer: '/url' })]);
    }
    expect((await s.sql("SELECT count(*)::int AS n FROM webhook_endpoints WHERE url LIKE '%/in' OR url LIKE '%ab'"))[0]?.n).toBe(0);
    expect((await call(url('/webhooks'), 'POST', { token: hooks, body: { url: 'https://[64:ff9b::808:808]/in' } })).status).toBe(201);
  });

  it('answers a delivery-log cursor with a number past its column 400, not 500', async () => {
    const hooks = await tokenFor(s.base, 'hooks', HOOKS_SECRET, 'admin_console_webhooks');
    const id = (await call(url('/webhooks'), 'POST', { token: hooks, body: { url: 'http://127.0.0.1:9/cursor' } })).body.id as string;
    for (const key of ['9999999999999999999.1.1', '9223372036854775808.1.1', '1.1.9999999999', '1.1.2147483648']) {
      const cursor = Buffer.from(`k1:${key}`, 'utf8').toString('base64url');
      const answer = await call(url(`/webhooks/${id}/deliveries?cursor=${cursor}`), 'GET', { token: hooks });
      expect(isProblem(answer, 400), key).toBe(true);
    }
    const fine = Buffer.from('k1:9223372036854775807.1.2147483647', 'utf8').toString('base64url');
    expect((await call(url(`/webhooks/${id}/deliveries?cursor=${fine}`), 'GET', { token: hooks })).body).toEqual({ items: [], next_cursor: null });
  });
});

describe('administration API: a budget per client (IDP_ADMIN_API_RATE_LIMIT)', () => {
  let s: AdminSetup;
  afterAll(async () => {
    await s?.stop();
  });

  it('answers a client over its budget 429 with Retry-After, as problem details, and leaves other clients their own', async () => {
    s = await startAdminApp({ IDP_ADMIN_API_RATE_LIMIT: '20' });
    const token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await call(`${s.api}/users?limit=1`, 'GET', { token })).status);
    expect(statuses.every((status) => status === 200)).toBe(true);
    const over = await call(`${s.api}/users?limit=1`, 'GET', { token });
    expect(isProblem(over, 429)).toBe(true);
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // A write is refused as well, and writes nothing.
    expect(isProblem(await call(`${s.api}/users`, 'POST', { token, body: { username: 'late', password: PASSWORD } }), 429)).toBe(true);
    expect(await s.sql("SELECT 1 FROM users WHERE username = 'late'")).toStrictEqual([]);
    const reader = await tokenFor(s.base, 'reader', READER_SECRET, 'admin_api_readonly');
    expect((await call(`${s.api}/users?limit=1`, 'GET', { token: reader })).status).toBe(200);
    const metrics = String((await call(`${s.base}/metrics`, 'GET')).body);
    expect(metrics).toMatch(/^idp_rate_limited_total\{kind="admin_api"\} 2$/m);
  });
});
