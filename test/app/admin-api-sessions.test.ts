/**
 * A user's sessions through the administration API, in process: a real sign-in (a browser
 * session and a refresh token family) listed, one ended with its tokens, then all ended.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkce } from '../helpers/oauth.ts';
import { Browser, authorizeThroughPages, codeFrom, codeRequest, redeem, refresh, userinfo } from '../helpers/relying-party.ts';
import { ADMIN_SECRET, ALICE, READER_SECRET, adminChanges, call, isProblem, startAdminApp, tokenFor, type AdminSetup } from '../e2e/admin-api-support.ts';

const WEB = { clientId: 'web', secret: 'web-secret-0123456789abcdefghijklmnop' };
const WEB_REDIRECT = 'https://rp.test/cb';

describe('administration API: a user\'s sessions', () => {
  let s: AdminSetup;
  let token: string;
  let sub: string;
  const url = (path: string) => `${s.api}${path}`;

  beforeAll(async () => {
    s = await startAdminApp({ LOG_LEVEL: 'info' });
    token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
    sub = (await call(url('/users?username=alice'), 'GET', { token })).body.items[0].sub as string;
  });
  afterAll(async () => {
    await s?.stop();
  });

  async function signIn(browser: Browser): Promise<{ access: string; refreshToken: string }> {
    const { verifier, challenge } = pkce();
    const page = await authorizeThroughPages(browser, s.base, codeRequest(s.base, 'web', WEB_REDIRECT, challenge, { scope: 'openid offline_access' }), ALICE);
    const tokens = await redeem(s.base, codeFrom(page, WEB_REDIRECT, `${s.base}/`), WEB_REDIRECT, verifier, WEB);
    return { access: String(tokens.body.access_token), refreshToken: String(tokens.body.refresh_token) };
  }

  it('lists the families and browser sessions, ends one family with its tokens, then every session', async () => {
    const browser = new Browser();
    const first = await signIn(browser);
    // A user's token is not the client credentials grant's: never an administrator's.
    expect(isProblem(await call(url('/clients'), 'GET', { token: first.access }), 401)).toBe(true);
    const listed = await call(url(`/users/${sub}/sessions`), 'GET', { token });
    expect(listed.status).toBe(200);
    expect(listed.body.refresh_token_families).toEqual([
      { id: expect.any(String), client_id: 'web', created_at: expect.any(String), last_used_at: expect.any(String), expires_at: expect.any(String) },
    ]);
    expect(listed.body.browser_sessions).toHaveLength(1);
    // The sessions are the user's: their ETag is the user's, and ending them needs it.
    const etag = listed.headers.get('etag') ?? '';
    expect(etag).toBe((await call(url(`/users/${sub}`), 'GET', { token })).headers.get('etag'));
    const reader = await tokenFor(s.base, 'reader', READER_SECRET, 'admin_api_readonly');
    expect((await call(url(`/users/${sub}/sessions`), 'GET', { token: reader })).status).toBe(200);
    expect(isProblem(await call(url(`/users/${sub}/sessions`), 'DELETE', { token: reader, headers: { 'if-match': etag } }), 403)).toBe(true);

    const family = listed.body.refresh_token_families[0].id as string;
    expect(isProblem(await call(url(`/users/${sub}/sessions/${family}`), 'DELETE', { token }), 428)).toBe(true);
    expect(isProblem(await call(url(`/users/${sub}/sessions`), 'DELETE', { token }), 428)).toBe(true);
    // Nothing ended by the refusals: the family still refreshes.
    const rotated = await refresh(s.base, WEB, first.refreshToken);
    expect(rotated.status).toBe(200);
    const ifMatch = { 'if-match': etag };
    expect((await call(url(`/users/${sub}/sessions/${family}`), 'DELETE', { token, headers: ifMatch })).status).toBe(204);
    expect((await refresh(s.base, WEB, String(rotated.body.refresh_token))).status).toBe(400);
    expect((await userinfo(s.base, first.access)).status).toBe(401);
    expect(isProblem(await call(url(`/users/${sub}/sessions/${family}`), 'DELETE', { token, headers: ifMatch }), 404)).toBe(true);
    expect(isProblem(await call(url(`/users/${sub}/sessions/%00`), 'DELETE', { token, headers: ifMatch }), 404)).toBe(true);
    expect(isProblem(await call(url('/users/nobody/sessions'), 'GET', { token }), 404)).toBe(true);

    const second = await signIn(browser);
    // A change to the user since the ETag was read: ending their sessions is refused, nothing ends.
    const renamed = await call(url(`/users/${sub}`), 'PATCH', { token, headers: ifMatch, body: { given_name: 'Alicia' } });
    expect(renamed.status).toBe(200);
    expect(isProblem(await call(url(`/users/${sub}/sessions`), 'DELETE', { token, headers: ifMatch }), 412)).toBe(true);
    expect((await userinfo(s.base, second.access)).status).toBe(200);
    const ended = await call(url(`/users/${sub}/sessions`), 'DELETE', { token, headers: { 'if-match': renamed.headers.get('etag') ?? '' } });
    expect(ended.status).toBe(200);
    expect(ended.body).toEqual({ browser_sessions: 1, refresh_token_families: 1 });
    expect((await userinfo(s.base, second.access)).status).toBe(401);
    expect((await refresh(s.base, WEB, second.refreshToken)).status).toBe(400);
    expect((await call(url(`/users/${sub}/sessions`), 'GET', { token })).body).toEqual({ refresh_token_families: [], browser_sessions: [] });
    expect(adminChanges(s.logs())).toContainEqual(expect.objectContaining({ actor: 'api', client_id: 'automation', action: 'delete', resource: 'user', resource_id: sub, fields: ['sessions'] }));
  });
});
