/**
 * The `oidc` sign-in source against a real upstream provider this project did not write: the
 * npm package oidc-provider, run in the test process (test/helpers/upstream-provider.ts), with
 * our server as its client. A cookie-jar browser walks both origins step by step: our authorize
 * and interaction, the upstream's login and consent pages, our callback, the code at the
 * relying party; then end session continued at the upstream's end_session_endpoint and back.
 * Upstream failures (refusal, unknown or replayed state, a callback from another browser, the
 * upstream unreachable) end on our own error page, leave no session behind, and the process
 * keeps serving.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, type Page } from '../helpers/browser-http.ts';
import { freePort, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import {
  abortAtUpstream, confirmUpstreamLogout, createUpstreamProvider, isUpstreamConsentPage, isUpstreamLoginPage,
  isUpstreamLogoutPage, submitUpstreamConsent, submitUpstreamLogin, type UpstreamAccount, type UpstreamProvider,
} from '../helpers/upstream-provider.ts';
import { decodeJwt, pkce, redeem, userinfo, type Pkce } from './code-flow-support.ts';

const IDP_SECRET = 'e'.repeat(64);
/** Our service's registration at the upstream. */
const AT_UPSTREAM = { clientId: 'our-idp', clientSecret: 'upstream-registration-secret-0123456789ab' };

/** The relying party registered with us. */
const RP = { clientId: 'rp', secret: 'rp-secret-0123456789abcdefghijklmnopqr' };
const RP_REDIRECT = 'https://rp.test/cb';
const RP_LOGOUT = 'https://rp.test/signed-out';
const SEED = {
  clients: [{
    client_id: RP.clientId, client_secret: RP.secret, display_name: 'Relying party',
    grant_types: ['authorization_code'], scopes: ['openid', 'profile', 'email', 'phone'],
    redirect_uris: [RP_REDIRECT], post_logout_redirect_uris: [RP_LOGOUT], require_consent: false,
  }],
};

/** Mixed case and punctuation on purpose: the upstream `sub` must come through unchanged. */
const ALICE: UpstreamAccount = {
  sub: 'Alice.Upstream-7F3a',
  claims: {
    given_name: 'Alice', family_name: 'Liddell', name: 'Alice Liddell',
    email: 'alice@upstream.test', email_verified: true,
    phone_number: '+15555550123', phone_number_verified: true,
  },
};
const BOB: UpstreamAccount = {
  sub: 'Bob-Upstream-01',
  claims: { given_name: 'Bob', family_name: 'Builder', name: 'Bob Builder', email: 'bob@upstream.test', email_verified: false, phone_number: '+15555550199' },
};
/** A name holding a terminal escape, an email that is more than an address: dropped, the sign-in goes on. */
const MALLORY: UpstreamAccount = {
  sub: 'Mallory-Upstream-02',
  claims: { given_name: 'Mallory', name: 'Mallory\u001b]0;owned\u0007', email: '<attacker@evil.example>mallory', email_verified: true, phone_number: '+15555550100' },
};
const PROFILE_CLAIMS = ['given_name', 'family_name', 'name', 'email', 'email_verified', 'phone_number', 'phone_number_verified'] as const;

interface Deployment {
  base: string;
  issuer: string;
  server: RunningServer;
  db: TestDatabase;
  upstream: UpstreamProvider;
}

/**
 * Our server on a port chosen first (the upstream registers redirect URIs under it), the upstream
 * created for it, a fresh database seeded with the relying party. The upstream listens unless
 * `upstreamDown`, in which case the server counts as started once /healthz answers.
 */
async function deploy(options: { upstreamDown?: boolean; claimsInIdToken?: boolean } = {}): Promise<Deployment> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const upstream = await createUpstreamProvider({
    ourBaseUrl: base, ...AT_UPSTREAM, accounts: [ALICE, BOB, MALLORY], claimsInIdToken: options.claimsInIdToken ?? false,
  });
  if (!options.upstreamDown) await upstream.start();
  const db = await createTestDatabase();
  const env = { DATABASE_URL: db.url, IDP_SECRET };
  let server: RunningServer | undefined;
  try {
    server = await startServer({
      ...env, LOG_LEVEL: 'info', IDP_SIGN_IN_SOURCE: 'oidc',
      IDP_UPSTREAM_ISSUER: upstream.issuer, IDP_UPSTREAM_CLIENT_ID: AT_UPSTREAM.clientId, IDP_UPSTREAM_CLIENT_SECRET: AT_UPSTREAM.clientSecret,
    }, undefined, { port, ...(options.upstreamDown ? { readyPath: '/healthz' } : {}) });
    await seedWith(SEED, env);
  } catch (error) {
    await server?.stop();
    await upstream.stop();
    await db.drop();
    throw error;
  }
  return { base, issuer: `${base}/`, server, db, upstream };
}

async function undeploy(deployment: Deployment | undefined): Promise<void> {
  if (!deployment) return;
  await deployment.server.stop();
  await deployment.upstream.stop();
  await deployment.db.drop();
}

function authorizeUrl(base: string, challenge: string, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({
    client_id: RP.clientId, response_type: 'code', redirect_uri: RP_REDIRECT, scope: 'openid profile email phone',
    code_challenge: challenge, code_challenge_method: 'S256', state: randomBytes(8).toString('hex'), nonce: randomBytes(8).toString('hex'),
    ...extra,
  });
  return `${base}/connect/authorize?${query.toString()}`;
}

interface WalkOptions {
  /** Sign in at the upstream's login page as this account. */
  login?: string;
  /** At the upstream's consent page: allow (default) or abort. */
  consent?: 'allow' | 'abort';
  /** Stop before following a redirect to a URL for which this says true. */
  stopBefore?: (url: string) => boolean;
}

/**
 * Follows redirects between our server and the upstream and acts on the upstream's pages, until
 * a page that is neither (our own page, an unhandled upstream page) or a redirect that leaves
 * both origins (normally the relying party). Returns the last answer and every URL visited.
 */
async function walk(browser: Browser, d: Deployment, first: Page, options: WalkOptions = {}): Promise<{ page: Page; visited: string[] }> {
  const visited = [first.url];
  let page = first;
  for (let step = 0; step < 25; step++) {
    const next = page.location;
    if (next !== undefined) {
      const internal = next.startsWith(`${d.base}/`) || next.startsWith(`${d.upstream.issuer}/`);
      if (!internal || options.stopBefore?.(next)) return { page, visited };
      page = await browser.get(next);
    } else if (isUpstreamLoginPage(page, d.upstream) && options.login !== undefined) {
      page = await submitUpstreamLogin(browser, page, options.login);
    } else if (isUpstreamConsentPage(page, d.upstream)) {
      page = options.consent === 'abort' ? await abortAtUpstream(browser, page) : await submitUpstreamConsent(browser, page);
    } else if (isUpstreamLogoutPage(page, d.upstream)) {
      page = await confirmUpstreamLogout(browser, page);
    } else {
      return { page, visited };
    }
    visited.push(page.url);
  }
  throw new Error(`no end after 25 steps: ${visited.join(' -> ')}`);
}

const isCallback = (d: Deployment) => (url: string) => url.startsWith(`${d.base}/signin/oidc/callback?`);

/** Our own error page: a status, no redirect, HTML with the error code in its text. */
function expectOurErrorPage(d: Deployment, page: Page, status: number, code: string, text?: RegExp): void {
  expect(page.url.startsWith(`${d.base}/`), `answered by our server: ${page.url}`).toBe(true);
  expect(page.status, page.body.slice(0, 400)).toBe(status);
  expect(page.location, 'an error page, not a redirect').toBeUndefined();
  expect(page.headers.get('content-type') ?? '').toMatch(/^text\/html/);
  expect(page.body).toContain(code);
  if (text) expect(page.body).toMatch(text);
}

/** The process still serves, and never logged an error (level 50 and up) or a crash. */
async function expectStillServing(d: Deployment): Promise<void> {
  expect(d.server.child.exitCode, 'the server process is alive').toBeNull();
  const health = await fetch(`${d.base}/healthz`);
  expect(health.status).toBe(200);
  const errors = d.server.output().split('\n').filter((line) => /"level":(5|6)\d/.test(line));
  expect(errors, 'no error-level log line').toEqual([]);
}

/** No session in this browser: a new authorize goes through our interaction to the upstream's sign-in. */
async function expectAsksForSignIn(d: Deployment, browser: Browser): Promise<void> {
  const page = await browser.follow(await browser.get(authorizeUrl(d.base, pkce().challenge)), d.base);
  expect(page.status, `${page.url} -> ${page.location ?? page.body.slice(0, 300)}`).toBe(303);
  expect(page.url).toMatch(new RegExp(`^${d.base}/interaction/`));
  expect(page.location?.startsWith(`${d.upstream.authorizationEndpoint}?`), page.location).toBe(true);
}

interface SignedIn {
  browser: Browser;
  pkce: Pkce;
  state: string;
  nonce: string;
  /** The relying party's redirect, with the code. */
  atRp: Page;
  visited: string[];
  callbackUrl: string;
  tokens: Record<string, unknown>;
  tokenStatus: number;
}

/** A complete sign-in as `account` in a fresh browser, and the code redeemed at our token endpoint. */
async function signIn(d: Deployment, account: UpstreamAccount): Promise<SignedIn> {
  const browser = new Browser();
  const verifier = pkce();
  const state = `st-${randomBytes(6).toString('hex')}`;
  const nonce = `n-${randomBytes(6).toString('hex')}`;
  const start = await browser.get(authorizeUrl(d.base, verifier.challenge, { state, nonce }));
  const { page: atRp, visited } = await walk(browser, d, start, { login: account.sub });
  const callbackUrl = visited.find(isCallback(d)) ?? '';
  const code = atRp.location?.startsWith(`${RP_REDIRECT}?`) ? new URL(atRp.location).searchParams.get('code') : null;
  const redeemed = code ? await redeem(d.base, code, RP_REDIRECT, verifier.verifier, { clientId: RP.clientId, secret: RP.secret }) : undefined;
  return { browser, pkce: verifier, state, nonce, atRp, visited, callbackUrl, tokens: redeemed?.body ?? {}, tokenStatus: redeemed?.status ?? 0 };
}

function expectUpstreamProfile(claims: Record<string, unknown>, account: UpstreamAccount): void {
  const expected = Object.fromEntries(PROFILE_CLAIMS.filter((name) => account.claims[name] !== undefined).map((name) => [name, account.claims[name]]));
  const actual = Object.fromEntries(PROFILE_CLAIMS.filter((name) => claims[name] !== undefined).map((name) => [name, claims[name]]));
  expect(actual).toEqual(expected);
}

describe.runIf(postgresAvailable)('upstream OpenID Connect provider (oidc-provider) as the sign-in source', () => {
  let d: Deployment;
  let alice: Promise<SignedIn> | undefined;
  /** One sign-in of Alice shared by the tests that only read its results. */
  const aliceSignedIn = () => (alice ??= signIn(d, ALICE));

  beforeAll(async () => {
    d = await deploy();
  });
  afterAll(async () => {
    await undeploy(d);
  });

  it('signs in at the upstream: our authorize, the upstream login and consent, our callback, a code at the relying party', async () => {
    const s = await aliceSignedIn();
    const path = s.visited.map((url) => new URL(url));
    expect(path[0]?.href.startsWith(`${d.base}/connect/authorize?`)).toBe(true);
    expect(path.some((url) => url.href.startsWith(`${d.base}/interaction/`)), 'through our interaction').toBe(true);
    const upstreamAuthorize = path.find((url) => url.href.startsWith(`${d.upstream.authorizationEndpoint}?`));
    expect(upstreamAuthorize, 'sent to the upstream authorization endpoint').toBeDefined();
    // What our server asked the upstream for: our registration, the code flow with PKCE S256, state and nonce.
    const asked = upstreamAuthorize?.searchParams;
    expect(asked?.get('client_id')).toBe(AT_UPSTREAM.clientId);
    expect(asked?.get('redirect_uri')).toBe(`${d.base}/signin/oidc/callback`);
    expect(asked?.get('response_type')).toBe('code');
    expect(asked?.get('code_challenge_method')).toBe('S256');
    expect(asked?.get('state')).toBeTruthy();
    expect(asked?.get('nonce')).toBeTruthy();
    expect(asked?.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'phone']));
    expect(s.callbackUrl, 'came back to our callback').not.toBe('');
    expect(new URL(s.callbackUrl).searchParams.get('state')).toBe(asked?.get('state'));

    expect(s.atRp.status, s.atRp.body.slice(0, 300)).toBe(302);
    expect(s.atRp.location?.startsWith(`${RP_REDIRECT}?`), s.atRp.location).toBe(true);
    const answer = new URL(s.atRp.location ?? '').searchParams;
    expect(answer.get('error')).toBeNull();
    expect(answer.get('code')).toBeTruthy();
    expect(answer.get('state')).toBe(s.state);
    expect(answer.get('iss')).toBe(d.issuer);
  });

  it('the code exchanged at our token endpoint gives an ID token with the upstream sub unchanged, idp oidc, amr [external], acr external', async () => {
    const s = await aliceSignedIn();
    expect(s.tokenStatus, JSON.stringify(s.tokens)).toBe(200);
    expect(s.tokens.token_type).toBe('Bearer');
    expect(typeof s.tokens.access_token).toBe('string');
    const { payload } = decodeJwt(String(s.tokens.id_token));
    expect(payload.iss).toBe(d.issuer);
    expect(payload.aud).toBe(RP.clientId);
    expect(payload.sub).toBe(ALICE.sub);
    expect(payload.nonce).toBe(s.nonce);
    expect(payload.idp).toBe('oidc');
    expect(payload.amr).toEqual(['external']);
    expect(payload.acr).toBe('urn:svc:ac:external');
    expect(typeof payload.auth_time).toBe('number');
    const access = decodeJwt(String(s.tokens.access_token)).payload;
    expect(access.sub).toBe(ALICE.sub);
    expect(access.idp).toBe('oidc');
  });

  it('the ID token carries the profile, email and phone claims taken from the upstream', async () => {
    const s = await aliceSignedIn();
    expect(s.tokenStatus, JSON.stringify(s.tokens)).toBe(200);
    const { payload } = decodeJwt(String(s.tokens.id_token));
    expectUpstreamProfile(payload, ALICE);
  });

  it('userinfo answers the same: the upstream sub, idp oidc and the upstream profile, email and phone claims', async () => {
    const s = await aliceSignedIn();
    expect(s.tokenStatus, JSON.stringify(s.tokens)).toBe(200);
    const info = await userinfo(d.base, String(s.tokens.access_token));
    expect(info.status, JSON.stringify(info.body)).toBe(200);
    expect(info.body.sub).toBe(ALICE.sub);
    expect(info.body.idp).toBe('oidc');
    expectUpstreamProfile(info.body, ALICE);
  });

  it('drops an upstream claim holding control characters, or an email that is not a bare address (and its email_verified): the sign-in goes on, the claim is neither stored nor released', async () => {
    const s = await signIn(d, MALLORY);
    expect(s.tokenStatus, JSON.stringify(s.tokens)).toBe(200);
    const { payload } = decodeJwt(String(s.tokens.id_token));
    expect(payload.sub).toBe(MALLORY.sub);
    const info = await userinfo(d.base, String(s.tokens.access_token));
    expect(info.body).toMatchObject({ sub: MALLORY.sub, given_name: 'Mallory', phone_number: '+15555550100' });
    expect(info.body).not.toHaveProperty('name');
    expect(info.body).not.toHaveProperty('email');
    expect(info.body).not.toHaveProperty('email_verified', true);
    const [stored] = await runSql<{ name: string | null; email: string | null; email_verified: boolean }>(d.db.url, `SELECT name, email, email_verified FROM users WHERE subject = $1`, [MALLORY.sub]);
    expect(stored).toStrictEqual({ name: null, email: null, email_verified: false });
  });

  it('end session continues at the upstream end_session_endpoint and comes back to the client with its state; both sessions are gone', async () => {
    const s = await aliceSignedIn();
    expect(s.tokenStatus, JSON.stringify(s.tokens)).toBe(200);
    const idToken = String(s.tokens.id_token);
    const state = `bye-${randomBytes(6).toString('hex')}`;
    const logout = await s.browser.get(`${d.base}/connect/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: RP_LOGOUT, state }).toString()}`);

    // Our server signs out, then sends the browser to the upstream with our way back.
    expect(logout.status, logout.body.slice(0, 300)).toBe(302);
    expect(logout.location?.startsWith(`${d.upstream.endSessionEndpoint}?`), logout.location).toBe(true);
    const toUpstream = new URL(logout.location ?? '').searchParams;
    expect(toUpstream.get('post_logout_redirect_uri')).toBe(`${d.base}/signin/oidc/signed-out`);
    expect(toUpstream.get('client_id')).toBe(AT_UPSTREAM.clientId);
    expect(toUpstream.get('id_token_hint'), 'the upstream ID token, not ours').toBeTruthy();
    expect(toUpstream.get('id_token_hint')).not.toBe(idToken);
    expect(decodeJwt(toUpstream.get('id_token_hint') ?? 'x.e30.x').payload.iss).toBe(d.upstream.issuer);
    expect(toUpstream.get('state'), 'our own state for the way back, not the client one').toBeTruthy();
    expect(toUpstream.get('state')).not.toBe(state);

    const upstreamPage = await s.browser.get(logout.location ?? '');
    expect(isUpstreamLogoutPage(upstreamPage, d.upstream), upstreamPage.body.slice(0, 300)).toBe(true);
    const { page: back, visited } = await walk(s.browser, d, await confirmUpstreamLogout(s.browser, upstreamPage));
    expect(visited.some((url) => url.startsWith(`${d.base}/signin/oidc/signed-out?`)), visited.join(' -> ')).toBe(true);
    expect(back.url.startsWith(`${d.base}/signin/oidc/signed-out?`), back.url).toBe(true);
    expect(back.status, back.body.slice(0, 300)).toBe(302);
    expect(back.location).toBe(`${RP_LOGOUT}?state=${state}`);

    // Our session is gone: a new authorize goes to the upstream, and the upstream asks to sign in again.
    await expectAsksForSignIn(d, s.browser);
    const again = await walk(s.browser, d, await s.browser.get(authorizeUrl(d.base, pkce().challenge)));
    expect(isUpstreamLoginPage(again.page, d.upstream), `${again.page.url}: ${again.page.body.slice(0, 200)}`).toBe(true);
    // The way back was single use.
    const replayed = await s.browser.get(back.url);
    expect(replayed.location, 'no second redirect to the client').toBeUndefined();
    await expectStillServing(d);
  });

  it('end session through the upstream revokes the client\'s access token for the user (a client without refresh tokens)', async () => {
    const s = await signIn(d, BOB);
    expect(s.tokenStatus, JSON.stringify(s.tokens)).toBe(200);
    const accessToken = String(s.tokens.access_token);
    expect((await userinfo(d.base, accessToken)).status, 'accepted before sign-out').toBe(200);
    const logout = await s.browser.get(`${d.base}/connect/logout?${new URLSearchParams({ id_token_hint: String(s.tokens.id_token), post_logout_redirect_uri: RP_LOGOUT }).toString()}`);
    const { page: back } = await walk(s.browser, d, logout);
    expect(back.location).toBe(RP_LOGOUT);
    const info = await userinfo(d.base, accessToken);
    expect(info.status, `userinfo after end session: ${JSON.stringify(info.body)}`).toBe(401);
    expect(info.headers.get('www-authenticate') ?? '').toMatch(/^Bearer/);
  });

  it('the upstream refuses (abort at its consent page: access_denied): our error page, no session, the process keeps serving', async () => {
    const browser = new Browser();
    const start = await browser.get(authorizeUrl(d.base, pkce().challenge));
    const { page, visited } = await walk(browser, d, start, { login: BOB.sub, consent: 'abort' });
    const callback = visited.find(isCallback(d));
    expect(callback, visited.join(' -> ')).toBeDefined();
    expect(new URL(callback ?? d.base).searchParams.get('error')).toBe('access_denied');
    expectOurErrorPage(d, page, 400, 'access_denied');
    await expectStillServing(d);
    await expectAsksForSignIn(d, browser);
  });

  it('a callback with an unknown state, or none: our error page invalid_request, no session', async () => {
    const browser = new Browser();
    // A sign-in under way in this browser: our interaction has sent it to the upstream.
    const started = await browser.follow(await browser.get(authorizeUrl(d.base, pkce().challenge)), d.base);
    expect(started.location?.startsWith(`${d.upstream.authorizationEndpoint}?`), started.location).toBe(true);
    const realState = new URL(started.location ?? d.base).searchParams.get('state') ?? '';

    const unknown = await browser.get(`${d.base}/signin/oidc/callback?${new URLSearchParams({ code: 'made-up-code', state: `${realState}x`, iss: d.upstream.issuer }).toString()}`);
    expectOurErrorPage(d, unknown, 400, 'invalid_request');
    const none = await browser.get(`${d.base}/signin/oidc/callback?code=made-up-code`);
    expectOurErrorPage(d, none, 400, 'invalid_request');
    await expectStillServing(d);
    await expectAsksForSignIn(d, browser);
  });

  it('a callback replayed (the same state twice): our error page invalid_request, no second code, nobody signed in by it', async () => {
    const s = await signIn(d, BOB);
    expect(s.atRp.location?.startsWith(`${RP_REDIRECT}?code=`), s.atRp.location).toBe(true);
    expect(s.callbackUrl).not.toBe('');

    const again = await s.browser.get(s.callbackUrl);
    expectOurErrorPage(d, again, 400, 'invalid_request');
    const elsewhere = new Browser();
    const stolen = await elsewhere.get(s.callbackUrl);
    expectOurErrorPage(d, stolen, 400, 'invalid_request');
    await expectStillServing(d);
    await expectAsksForSignIn(d, elsewhere);
  });

  it('the account page signs in through the upstream and comes back: profile, applications and sessions; no password change, no second factor here', async () => {
    const browser = new Browser();
    const { page } = await walk(browser, d, await browser.get(`${d.base}/account`), { login: BOB.sub });
    expect(page.url).toBe(`${d.base}/account`);
    expect(page.status, page.body.slice(0, 400)).toBe(200);
    for (const text of ['<h1>Your account</h1>', 'Bob Builder', 'bob@upstream.test', 'Your applications', 'This browser', 'sign-in provider']) expect(page.body).toContain(text);
    expect(page.body).not.toContain('name="current_password"');
    expect(page.body).not.toContain('Set up authenticator app');
  });

  it('a callback opened in another browser than the one that started the sign-in: refused, that browser is not signed in', async () => {
    const victim = new Browser();
    const start = await victim.get(authorizeUrl(d.base, pkce().challenge));
    const { page } = await walk(victim, d, start, { login: BOB.sub, stopBefore: isCallback(d) });
    expect(page.location && isCallback(d)(page.location), page.location).toBe(true);

    const attacker = new Browser();
    const planted = await attacker.get(page.location ?? '');
    expectOurErrorPage(d, planted, 400, 'invalid_request');
    await expectStillServing(d);
    await expectAsksForSignIn(d, attacker);
  });

  it('the upstream unreachable when the browser comes back (token request fails): our page temporarily_unavailable, no session', async () => {
    const browser = new Browser();
    const start = await browser.get(authorizeUrl(d.base, pkce().challenge));
    const { page } = await walk(browser, d, start, { login: ALICE.sub, stopBefore: isCallback(d) });
    expect(page.location && isCallback(d)(page.location), page.location).toBe(true);
    await d.upstream.stop();
    try {
      const callback = await browser.get(page.location ?? '');
      expectOurErrorPage(d, callback, 503, 'temporarily_unavailable', /provider is unavailable/i);
      await expectStillServing(d);
    } finally {
      await d.upstream.start();
    }
    await expectAsksForSignIn(d, browser);
  });

  it('the upstream stops answering after it was discovered: /readyz reports it and a new sign-in ends on our page', async () => {
    const before = await fetch(`${d.base}/readyz`);
    expect(before.status).toBe(200);
    await d.upstream.stop();
    try {
      const ready = await fetch(`${d.base}/readyz`);
      const readyBody = (await ready.json()) as Record<string, unknown>;
      const browser = new Browser();
      const page = await browser.follow(await browser.get(authorizeUrl(d.base, pkce().challenge)), d.base);
      await expectStillServing(d);
      // Both are checked (soft): they fail or pass independently.
      expect.soft({ status: ready.status, body: readyBody }, '/readyz with the upstream down').toEqual({
        status: 503, body: expect.objectContaining({ status: 'unavailable', directory: 'unavailable' }),
      });
      expect.soft({ url: page.url, status: page.status, location: page.location }, 'a sign-in started with the upstream down').toEqual({
        url: expect.stringMatching(new RegExp(`^${d.base}/interaction/`)), status: 503, location: undefined,
      });
      expect.soft(page.body).toContain('temporarily_unavailable');
      expect.soft(page.body).toMatch(/provider is unavailable/i);
    } finally {
      await d.upstream.start();
    }
    const after = await fetch(`${d.base}/readyz`);
    expect(after.status, 'ready again once the upstream answers').toBe(200);
  });
});

describe.runIf(postgresAvailable)('upstream provider down when our server starts, then up (claims in its ID token)', () => {
  let d: Deployment;

  beforeAll(async () => {
    d = await deploy({ upstreamDown: true, claimsInIdToken: true });
  });
  afterAll(async () => {
    await undeploy(d);
  });

  it('while the upstream is unreachable: /readyz 503 naming it, a sign-in ends on our page temporarily_unavailable, /healthz 200', async () => {
    const ready = await fetch(`${d.base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual(expect.objectContaining({ status: 'unavailable', database: 'ok', store: 'ok', directory: 'unavailable' }));
    const browser = new Browser();
    const page = await browser.follow(await browser.get(authorizeUrl(d.base, pkce().challenge)), d.base);
    expectOurErrorPage(d, page, 503, 'temporarily_unavailable', /provider is unavailable/i);
    await expectStillServing(d);
  });

  it('once the upstream answers: ready, and a sign-in carries the claims the upstream put in its ID token', async () => {
    await d.upstream.start();
    const ready = await fetch(`${d.base}/readyz`);
    expect(ready.status).toBe(200);
    const s = await signIn(d, ALICE);
    expect(s.tokenStatus, `${s.visited.join(' -> ')} ${JSON.stringify(s.tokens)}`).toBe(200);
    const { payload } = decodeJwt(String(s.tokens.id_token));
    expect(payload.sub).toBe(ALICE.sub);
    expect(payload.idp).toBe('oidc');
    expect(payload.amr).toEqual(['external']);
    expect(payload.acr).toBe('urn:svc:ac:external');
    expectUpstreamProfile(payload, ALICE);
    const info = await userinfo(d.base, String(s.tokens.access_token));
    expect(info.body.sub).toBe(ALICE.sub);
    expectUpstreamProfile(info.body, ALICE);
    await expectStillServing(d);
  });
});
