/**
 * Two `idp serve` processes on one PostgreSQL database and one Redis behave as one service.
 *
 * How requests reach "the other instance": the host check compares the Host header with
 * IDP_BASE_URL, and fetch always sends the address it connects to as Host (it ignores a Host
 * header it is given). So both instances get the same IDP_BASE_URL, that of a small load
 * balancer in this test (an HTTP proxy that keeps the Host header, as a real one does), and the
 * test chooses with `lb.use(A | B)` which instance serves the next requests. Every helper that
 * takes a base URL then works unchanged, cookies and redirects included. The balancer adds
 * X-Forwarded-For (a fresh address per request unless the request names one), which the
 * instances trust (IDP_TRUST_PROXY=true), as behind a real load balancer.
 */
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServersAvailable, startRedisCluster } from '../helpers/distributed.ts';
import { postgresAvailable } from '../helpers/services.ts';
import type { RunningServer } from '../helpers/process.ts';
import { AddressedBrowser, alertText, awayFromStepEnd, describePage, isOtpPage, kindOf, nowSeconds, submit, totp, THROTTLED_TEXT } from './account-support.ts';
import {
  ALICE, Balancer, MIA, SERVICE_SECRET, WEB_REDIRECT, WEB_SECRET, roomInRateWindow, seedOf, serviceClient, sleep, startDeployment, startOwnRedis, webClient,
  type Deployment, type OwnRedis,
} from './operations-support.ts';
import {
  Browser, authorize, decodeJwt, expectOAuthError, introspect, isSignInPage, pkce, readForm, refresh, revoke, token, userinfo, type ClientCredentials,
} from './token-lifecycle-support.ts';

const RATE_LIMIT = 4;
const TOM = { username: 'tom', password: 'his long and secret password 9' };
const web = (clientId: string): ClientCredentials => ({ clientId, secret: WEB_SECRET });
const service = (clientId: string): ClientCredentials => ({ clientId, secret: SERVICE_SECRET });

async function jwksOf(base: string): Promise<{ keys: Array<{ kid: string }> }> {
  const res = await fetch(`${base}/.well-known/jwks`);
  expect(res.status).toBe(200);
  return (await res.json()) as { keys: Array<{ kid: string }> };
}

/** Polls `check` every 20 ms until it is true; returns the milliseconds it took, or fails after `limitMs`. */
async function within(limitMs: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    expect(Date.now() - started, what).toBeLessThan(limitMs);
    await sleep(20);
  }
  return Date.now() - started;
}

interface SharedRedis {
  url: string;
  stop(): Promise<void>;
  /** A cluster's: how many keys each master holds. */
  keysPerMaster?(): Promise<number[]>;
}

/**
 * The shared Redis: one server, and a Cluster of three masters started by the test and reached
 * through the documented `redis+cluster://host:port,…` list, where every multi-key operation
 * must stay within one hash slot.
 */
const REDIS_KINDS: Array<{ kind: string; start: () => Promise<SharedRedis> }> = [
  { kind: 'one Redis', start: (): Promise<OwnRedis> => startOwnRedis() },
  ...(redisServersAvailable ? [{ kind: 'a Redis Cluster of three masters', start: () => startRedisCluster(3) }] : []),
];

describe.runIf(postgresAvailable).each(REDIS_KINDS)('two instances on one database and $kind', ({ start }) => {
  let redis: SharedRedis;
  let lb: Balancer;
  let deployment: Deployment;
  let A: RunningServer;
  let B: RunningServer;
  let base: string;

  beforeAll(async () => {
    [redis, lb] = await Promise.all([start(), Balancer.start()]);
    base = lb.url;
    deployment = await startDeployment({
      seed: seedOf(
        [webClient('web'), webClient('web-session'), webClient('web-mfa'), webClient('web-refresh'), webClient('web-revoke'), serviceClient('svc-keys'), serviceClient('svc-sql'), serviceClient('svc-metered'), serviceClient('svc-other')],
        [ALICE, MIA, TOM],
      ),
      env: {
        IDP_BASE_URL: base, REDIS_URL: redis.url, IDP_TRUST_PROXY: 'true',
        IDP_TOKEN_RATE_LIMIT: String(RATE_LIMIT), IDP_LOGIN_MAX_FAILURES: '3', IDP_REFRESH_TOKEN_REUSE_GRACE: '0',
      },
      instances: 2,
    });
    [A, B] = deployment.servers as [RunningServer, RunningServer];
  });
  afterAll(async () => {
    await deployment?.stop();
    await lb?.close();
    await redis?.stop();
  });

  it('answers at both instances for one issuer, and refuses a Host that is not the base URL', async () => {
    for (const server of [A, B]) {
      lb.use(server);
      const res = await fetch(`${base}/.well-known/openid-configuration`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { issuer: string }).issuer).toBe(`${base}/`);
      // Straight to the instance's own port: its Host is not the public one.
      const direct = await fetch(`${server.url}/.well-known/openid-configuration`);
      expect(direct.status).toBe(400);
    }
    expect(lb.served.get(A.port)).toBeGreaterThan(0);
    expect(lb.served.get(B.port)).toBeGreaterThan(0);
  });

  it('redeems at B a code issued by A, once only: a second redemption at A is invalid_grant', async () => {
    lb.use(A);
    const browser = new Browser();
    const { code, verifier } = await authorize(browser, base, 'web', WEB_REDIRECT, ALICE, 'openid profile offline_access');
    lb.use(B);
    const servedByB = lb.served.get(B.port) ?? 0;
    const res = await token(base, web('web'), { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    expect(res.status, res.text).toBe(200);
    expect(lb.served.get(B.port)).toBe(servedByB + 1);
    const id = decodeJwt(String(res.body.id_token)).payload;
    expect(id.iss).toBe(`${base}/`);
    expect(id.aud).toBe('web');
    // The ID token verifies against the keys A publishes.
    lb.use(A);
    await jwtVerify(String(res.body.id_token), createLocalJWKSet(await jwksOf(base)), { issuer: `${base}/`, audience: 'web' });
    const again = await token(base, web('web'), { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    expectOAuthError(again, 400, 'invalid_grant');
  });

  it('continues on B a browser session started on A: B issues a code without a page, and a sign-in begun on A finishes on B', async () => {
    const browser = new Browser();
    lb.use(A);
    await authorize(browser, base, 'web-session', WEB_REDIRECT, ALICE, 'openid offline_access');
    lb.use(B);
    const fromB = await authorizeWithoutPage(browser, 'web-session');
    lb.use(A);
    const redeemed = await token(base, web('web-session'), { grant_type: 'authorization_code', code: fromB.code, redirect_uri: WEB_REDIRECT, code_verifier: fromB.verifier });
    expect(redeemed.status, redeemed.text).toBe(200);
    expect(decodeJwt(String(redeemed.body.id_token)).payload.sub).toBeTruthy();

    // Mid-way: the sign-in page comes from A, the password goes to B.
    const other = new Browser();
    const { challenge } = pkce();
    const query = new URLSearchParams({
      client_id: 'web-session', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid',
      code_challenge: challenge, code_challenge_method: 'S256', state: 's1',
    });
    lb.use(A);
    const page = await other.follow(await other.get(`${base}/connect/authorize?${query}`), base);
    expect(isSignInPage(page), page.body.slice(0, 300)).toBe(true);
    lb.use(B);
    const form = readForm(page.body, page.url);
    const done = await other.follow(await other.post(form.action, { ...form.fields, username: ALICE.username, password: ALICE.password }), base);
    expect(done.status, done.body.slice(0, 300)).toBe(302);
    expect(done.location?.startsWith(`${WEB_REDIRECT}?`), done.location).toBe(true);
    expect(new URL(done.location ?? '').searchParams.get('code')).toBeTruthy();
    // The session made on B serves A at once.
    lb.use(A);
    await authorizeWithoutPage(other, 'web-session');
  });

  async function authorizeWithoutPage(browser: Browser, clientId: string): Promise<{ code: string; verifier: string }> {
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({
      client_id: clientId, response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid offline_access',
      code_challenge: challenge, code_challenge_method: 'S256', state: 'again',
    });
    const page = await browser.get(`${base}/connect/authorize?${query}`);
    expect(page.status, `a page instead of a redirect: ${page.status} ${page.location ?? ''} ${page.body.slice(0, 200)}`).toBe(302);
    expect(page.location?.startsWith(`${WEB_REDIRECT}?`), page.location).toBe(true);
    const code = new URL(page.location ?? '').searchParams.get('code');
    expect(code).toBeTruthy();
    return { code: code ?? '', verifier };
  }

  it('publishes and signs with a key rotated by `idp keys rotate` on both instances within a second', async () => {
    lb.use(A);
    const before = await jwksOf(base);
    expect(before.keys).toHaveLength(1);
    lb.use(B);
    expect(await jwksOf(base)).toStrictEqual(before);
    const oldKid = before.keys[0]?.kid;

    const rotated = await deployment.idp(['keys', 'rotate', '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const newKid = (JSON.parse(rotated.stdout) as { kid: string }).kid;
    expect(newKid).not.toBe(oldKid);

    for (const server of [A, B]) {
      lb.use(server);
      await within(1000, `instance ${server.port} publishes the new key`, async () => (await jwksOf(base)).keys.some((k) => k.kid === newKid));
      expect((await jwksOf(base)).keys.map((k) => k.kid).sort()).toStrictEqual([oldKid, newKid].sort());
    }

    // A token from B carries the new kid and verifies with A's key set (and the other way round).
    lb.use(B);
    const fromB = await token(base, service('svc-keys'), { grant_type: 'client_credentials', scope: 'orders.read' });
    expect(fromB.status, fromB.text).toBe(200);
    expect(decodeJwt(String(fromB.body.access_token)).header.kid).toBe(newKid);
    lb.use(A);
    const setOfA = createLocalJWKSet(await jwksOf(base));
    await jwtVerify(String(fromB.body.access_token), setOfA, { issuer: `${base}/` });
    const fromA = await token(base, service('svc-keys'), { grant_type: 'client_credentials', scope: 'orders.read' });
    expect(fromA.status, fromA.text).toBe(200);
    expect(decodeJwt(String(fromA.body.access_token)).header.kid).toBe(newKid);
    lb.use(B);
    await jwtVerify(String(fromA.body.access_token), createLocalJWKSet(await jwksOf(base)), { issuer: `${base}/` });
  });

  it('sees an SQL edit of a client on both instances within a second', async () => {
    const who = service('svc-sql');
    lb.use(A);
    const issued = await token(base, who, { grant_type: 'client_credentials', scope: 'orders.read' });
    expect(issued.status, issued.text).toBe(200);
    const accessToken = String(issued.body.access_token);
    // Both instances know the client (cached) before the edit.
    const introspectAt = async (server: RunningServer) => {
      lb.use(server);
      return introspect(base, who, accessToken);
    };
    for (const server of [A, B]) expect((await introspectAt(server)).body.active).toBe(true);

    await deployment.sql(`UPDATE clients SET enabled = false WHERE client_id = 'svc-sql'`);
    for (const server of [A, B]) {
      await within(1000, `instance ${server.port} sees the client disabled`, async () => (await introspectAt(server)).status === 401);
    }
    const refused = await introspectAt(B);
    expectOAuthError(refused, 401, 'invalid_client');

    await deployment.sql(`UPDATE clients SET enabled = true WHERE client_id = 'svc-sql'`);
    for (const server of [A, B]) {
      await within(1000, `instance ${server.port} sees the client enabled again`, async () => (await introspectAt(server)).status === 200);
    }
  });

  it(`shares the token rate limit (IDP_TOKEN_RATE_LIMIT=${RATE_LIMIT}) of a client between A and B`, async () => {
    await roomInRateWindow(12);
    const grant = (server: RunningServer, who: ClientCredentials) => {
      lb.use(server);
      return token(base, who, { grant_type: 'client_credentials', scope: 'orders.read' });
    };
    const metered = service('svc-metered');
    for (const server of [A, B, A, B]) {
      const res = await grant(server, metered);
      expect(res.status, res.text).toBe(200);
    }
    for (const server of [A, B]) {
      const res = await grant(server, metered);
      expectOAuthError(res, 429, 'slow_down');
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    }
    // The budget is the client's: another client is served by both.
    expect((await grant(A, service('svc-other'))).status).toBe(200);
    expect((await grant(B, service('svc-other'))).status).toBe(200);
  });

  it(`shares the per-address token budget between A and B (one address, unknown clients)`, async () => {
    await roomInRateWindow(12);
    const address = lb.freshAddress();
    const stranger = (n: number): ClientCredentials => ({ clientId: `nobody-${n}`, secret: SERVICE_SECRET });
    for (const [i, server] of [A, B, A, B].entries()) {
      lb.use(server);
      const res = await token(base, stranger(i), { grant_type: 'client_credentials' }, { 'x-forwarded-for': address });
      expectOAuthError(res, 401, 'invalid_client');
    }
    for (const server of [A, B]) {
      lb.use(server);
      expectOAuthError(await token(base, stranger(9), { grant_type: 'client_credentials' }, { 'x-forwarded-for': address }), 429, 'slow_down');
    }
  });

  it('shares the TOTP replay guard: a code used at A is refused at B', async () => {
    await awayFromStepEnd(8);
    /** A browser at the second-factor page of `web-mfa`, reached through `server`. */
    const toOtpPage = async (server: RunningServer) => {
      const browser = new Browser();
      lb.use(server);
      const { challenge } = pkce();
      const query = new URLSearchParams({
        client_id: 'web-mfa', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid',
        code_challenge: challenge, code_challenge_method: 'S256', state: 'mfa',
      });
      const start = await browser.follow(await browser.get(`${base}/connect/authorize?${query}`), base);
      expect(isSignInPage(start), start.body.slice(0, 300)).toBe(true);
      const page = await submit(browser, start, base, { username: MIA.username, password: MIA.password });
      expect(isOtpPage(page), describePage(page)).toBe(true);
      return { browser, page };
    };
    const atA = await toOtpPage(A);
    const atB = await toOtpPage(B);
    const code = await totp(MIA.totp_secret, nowSeconds());

    lb.use(A);
    const accepted = await submit(atA.browser, atA.page, base, { otp: code });
    expect(kindOf(accepted), describePage(accepted)).toBe('redirect');

    lb.use(B);
    const replayed = await submit(atB.browser, atB.page, base, { otp: code });
    expect(isOtpPage(replayed), describePage(replayed)).toBe(true);
    expect(alertText(replayed)).toMatch(/used already|not right/);
    // B checks codes at all: the next step's code (within the allowed drift) is accepted there.
    const next = await totp(MIA.totp_secret, nowSeconds() + 30);
    const fresh = await submit(atB.browser, replayed, base, { otp: next });
    expect(kindOf(fresh), describePage(fresh)).toBe('redirect');
  });

  it('shares the sign-in throttle: failures from one address split across A and B lock the name there on both (IDP_LOGIN_MAX_FAILURES=3)', async () => {
    // One client address for every attempt (the balancer would give each request another).
    const address = new AddressedBrowser().address;
    const attempt = async (server: RunningServer, password: string) => {
      const browser = new AddressedBrowser(address);
      lb.use(server);
      const { challenge } = pkce();
      const query = new URLSearchParams({
        client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid',
        code_challenge: challenge, code_challenge_method: 'S256', state: 't',
      });
      const start = await browser.follow(await browser.get(`${base}/connect/authorize?${query}`), base);
      expect(isSignInPage(start), start.body.slice(0, 300)).toBe(true);
      return submit(browser, start, base, { username: TOM.username, password });
    };
    for (const server of [A, B, A]) {
      const page = await attempt(server, 'a wrong password');
      expect(alertText(page)).toMatch(/incorrect/);
    }
    for (const server of [B, A]) {
      // The right password no longer helps, at either instance.
      const page = await attempt(server, TOM.password);
      expect(isSignInPage(page), describePage(page)).toBe(true);
      expect(alertText(page)).toContain(THROTTLED_TEXT);
    }
  });
  // Each test below stays within the client's IDP_TOKEN_RATE_LIMIT of token requests.
  it('rotates a refresh token at B; the old one used again at A revokes the family at both', async () => {
    const who = web('web-refresh');
    lb.use(A);
    const { code, verifier } = await authorize(new Browser(), base, 'web-refresh', WEB_REDIRECT, ALICE, 'openid offline_access');
    const issued = await token(base, who, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    expect(issued.status, issued.text).toBe(200);
    const first = String(issued.body.refresh_token);
    lb.use(B);
    const second = await refresh(base, who, first);
    expect(second.status, second.text).toBe(200);
    // RFC 9700 4.14.2: a rotated token presented again means theft; the whole family ends.
    lb.use(A);
    expectOAuthError(await refresh(base, who, first), 400, 'invalid_grant');
    lb.use(B);
    expectOAuthError(await refresh(base, who, String(second.body.refresh_token)), 400, 'invalid_grant');
  });

  it('revokes at A an access token that B then refuses at once', async () => {
    const who = web('web-revoke');
    lb.use(B);
    const { code, verifier } = await authorize(new Browser(), base, 'web-revoke', WEB_REDIRECT, ALICE, 'openid offline_access');
    const issued = await token(base, who, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    const accessToken = String(issued.body.access_token);
    expect((await userinfo(base, accessToken)).status).toBe(200);
    lb.use(A);
    expect((await revoke(base, who, accessToken, { token_type_hint: 'access_token' })).status).toBe(200);
    lb.use(B);
    expect((await userinfo(base, accessToken)).status).toBe(401);
    expect((await introspect(base, who, accessToken)).body).toStrictEqual({ active: false });
  });

  it('spreads what it keeps over every master of a cluster', async ({ skip }) => {
    if (!redis.keysPerMaster) return skip('one Redis: no masters to spread over');
    const perMaster = await redis.keysPerMaster();
    expect(perMaster.length).toBe(3);
    for (const keys of perMaster) expect(keys, `keys per master: ${perMaster.join(', ')}`).toBeGreaterThan(0);
  });
});
