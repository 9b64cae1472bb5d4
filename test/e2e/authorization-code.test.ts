/**
 * The authorization code flow as a real relying party sees it: openid-client discovers the
 * service, builds the authorization URL, a cookie-jar browser signs in over HTTP, and
 * openid-client redeems the code and reads userinfo with all of its own checks on (RFC 9207 iss,
 * ID token signature, nonce, PKCE). Then the exact contents of the tokens, the refresh token
 * rule, and the `claims` request parameter.
 */
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/services.ts';
import {
  ALICE, BOB, Browser, CONSENT_REDIRECT, NO_REFRESH_REDIRECT, NO_REFRESH_SECRET, SPA_REDIRECT, WEB_REDIRECT, WEB_SECRET,
  authorizeThroughPages, codeFrom, codeRequest, decodeJwt, expectConsentPage, expectSignInPage, pkce, redeem,
  startSeededServer, submitConsent, submitSignIn, userinfo, CONSENT_SECRET, type Setup,
} from './code-flow-support.ts';

interface Captured {
  url: string;
  status: number;
  headers: Headers;
}

/** openid-client against this server over http, remembering every response it received. */
async function relyingParty(setup: Setup, clientId: string, auth: client.ClientAuth): Promise<{ config: client.Configuration; seen: Captured[] }> {
  const seen: Captured[] = [];
  const recording: client.CustomFetch = async (url, options) => {
    const res = await fetch(url, options as RequestInit);
    seen.push({ url, status: res.status, headers: res.headers });
    return res;
  };
  // openid-client keeps this fetch on the configuration for every later request.
  const config = await client.discovery(new URL(setup.issuer), clientId, undefined, auth, {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: recording,
  });
  return { config, seen };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

async function kids(base: string): Promise<string[]> {
  const set = (await (await fetch(`${base}/.well-known/jwks`)).json()) as { keys: Array<{ kid: string }> };
  return set.keys.map((k) => k.kid);
}

describe.runIf(postgresAvailable)('the authorization code flow with a real relying party', () => {
  let setup: Setup;
  /** Alice's browser once she has signed in (the web client needs no consent). */
  const alice = new Browser();

  beforeAll(async () => {
    setup = await startSeededServer();
  });
  afterAll(async () => {
    await setup?.stop();
  });

  /** A code for an already signed-in browser (fails the test when a page is shown instead). */
  async function silentCode(browser: Browser, clientId: string, redirectUri: string, extra: Record<string, string>) {
    const { verifier, challenge } = pkce();
    const page = await browser.get(codeRequest(setup.base, clientId, redirectUri, challenge, extra));
    return { code: codeFrom(page, redirectUri, setup.issuer), verifier };
  }

  it('signs in a confidential client (client_secret_basic) with every openid-client check on', async () => {
    const { config, seen } = await relyingParty(setup, 'web', client.ClientSecretBasic(WEB_SECRET));
    expect(config.serverMetadata().issuer).toBe(setup.issuer);
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const scope = 'openid profile email phone roles offline_access';
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: WEB_REDIRECT, scope, state, nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    expect(url.href.startsWith(`${setup.base}/connect/authorize?`)).toBe(true);

    const callback = await authorizeThroughPages(alice, setup.base, url.href, ALICE);
    expect(callback.status).toBe(302);
    expect(callback.location?.startsWith(`${WEB_REDIRECT}?`), callback.location).toBe(true);

    const before = seen.length;
    const tokens = await client.authorizationCodeGrant(config, new URL(callback.location ?? ''), {
      pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true,
    });
    const tokenResponse = seen.slice(before).find((s) => s.url.endsWith('/connect/token'));
    expect(tokenResponse?.status).toBe(200);
    expect(tokenResponse?.headers.get('cache-control')).toMatch(/no-store/);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(900);
    expect(tokens.scope?.split(' ').sort()).toStrictEqual(scope.split(' ').sort());
    expect(typeof tokens.refresh_token).toBe('string');

    const now = nowSeconds();
    const id = decodeJwt(tokens.id_token ?? '');
    const claims = tokens.claims();
    expect(claims?.sub).toBe(id.payload.sub);
    expect(id.payload).toMatchObject({
      iss: setup.issuer, aud: 'web', amr: ['pwd'], acr: 'urn:svc:ac:pwd', nonce,
      name: 'Alice Liddell', given_name: 'Alice', family_name: 'Liddell', preferred_username: 'alice', idp: 'local',
      email: 'alice@example.com', email_verified: true, phone_number: '+15555550100', phone_number_verified: false,
      role: ['admin', 'buyer'],
    });
    expect(String(id.payload.iss).endsWith('/')).toBe(true);
    expect(typeof id.payload.sub === 'string' && id.payload.sub !== '').toBe(true);
    for (const t of ['iat', 'exp', 'auth_time', 'updated_at'] as const) expect(Number.isInteger(id.payload[t]), t).toBe(true);
    expect(Math.abs(Number(id.payload.iat) - now)).toBeLessThanOrEqual(60);
    expect(Number(id.payload.exp)).toBeGreaterThan(now);
    expect(Number(id.payload.auth_time)).toBeLessThanOrEqual(Number(id.payload.iat));
    expect(now - Number(id.payload.auth_time)).toBeLessThanOrEqual(60);
    expect(id.payload).not.toHaveProperty('sid');
    expect(id.header.alg).toBe('RS256');

    const access = decodeJwt(tokens.access_token);
    expect(access.payload).toMatchObject({ iss: setup.issuer, sub: id.payload.sub, client_id: 'web', role: ['admin', 'buyer'], email: 'alice@example.com' });
    expect(String(access.payload.scope).split(' ').sort()).toStrictEqual(scope.split(' ').sort());
    expect(access.payload).not.toHaveProperty('aud');
    expect(Number(access.payload.exp) - Number(access.payload.iat)).toBe(900);
    expect(access.header.alg).toBe('RS256');
    const published = await kids(setup.base);
    expect(published).toContain(id.header.kid);
    expect(published).toContain(access.header.kid);

    const info = await client.fetchUserInfo(config, tokens.access_token, String(id.payload.sub));
    expect(info).toMatchObject({
      sub: id.payload.sub, name: 'Alice Liddell', preferred_username: 'alice', idp: 'local',
      email: 'alice@example.com', phone_number: '+15555550100', role: ['admin', 'buyer'],
    });
    expect(info).not.toHaveProperty('iss');
    expect(info).not.toHaveProperty('aud');
  });

  it('signs in a public client (no client authentication) and releases only the values the user has', async () => {
    const { config } = await relyingParty(setup, 'spa', client.None());
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: SPA_REDIRECT, scope: 'openid profile email roles', state, nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const callback = await authorizeThroughPages(new Browser(), setup.base, url.href, BOB);
    const tokens = await client.authorizationCodeGrant(config, new URL(callback.location ?? ''), {
      pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true,
    });
    // Default lifetime; no offline_access asked, so no refresh token even with the refresh grant.
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.refresh_token).toBeUndefined();

    const id = decodeJwt(tokens.id_token ?? '').payload;
    expect(id).toMatchObject({ iss: setup.issuer, aud: 'spa', nonce, amr: ['pwd'], acr: 'urn:svc:ac:pwd', name: 'Bob Builder', idp: 'local', role: 'viewer' });
    for (const absent of ['email', 'email_verified', 'phone_number', 'phone_number_verified']) expect(id, absent).not.toHaveProperty(absent);
    const access = decodeJwt(tokens.access_token).payload;
    expect(access).toMatchObject({ client_id: 'spa', sub: id.sub, role: 'viewer' });
    expect(access).not.toHaveProperty('aud');
    expect(access).not.toHaveProperty('email');

    const info = await client.fetchUserInfo(config, tokens.access_token, String(id.sub));
    expect(info).toMatchObject({ sub: id.sub, name: 'Bob Builder', role: ['viewer'] });
    expect(info).not.toHaveProperty('email');
    expect(info).not.toHaveProperty('phone_number');
  });

  it('also accepts client_secret_post from openid-client (its default with a secret)', async () => {
    const config = await client.discovery(new URL(setup.issuer), 'web', WEB_SECRET, undefined, { execute: [client.allowInsecureRequests] });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: WEB_REDIRECT, scope: 'openid', state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    // Alice is signed in already: the code comes without a page.
    const callback = await alice.get(url.href);
    const tokens = await client.authorizationCodeGrant(config, new URL(callback.location ?? ''), { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
    const id = decodeJwt(tokens.id_token ?? '').payload;
    expect(id.aud).toBe('web');
    expect(id).not.toHaveProperty('nonce');
    // Only openid: no scope claims at all.
    for (const absent of ['name', 'email', 'phone_number', 'role', 'idp']) expect(id, absent).not.toHaveProperty(absent);
  });

  it('gives a refresh token only with the refresh grant and offline_access', async () => {
    const withOffline = await silentCode(alice, 'web', WEB_REDIRECT, { scope: 'openid offline_access' });
    const a = await redeem(setup.base, withOffline.code, WEB_REDIRECT, withOffline.verifier, { clientId: 'web', secret: WEB_SECRET });
    expect(a.status).toBe(200);
    expect(typeof a.body.refresh_token).toBe('string');

    const withoutOffline = await silentCode(alice, 'web', WEB_REDIRECT, { scope: 'openid email' });
    const b = await redeem(setup.base, withoutOffline.code, WEB_REDIRECT, withoutOffline.verifier, { clientId: 'web', secret: WEB_SECRET });
    expect(b.status).toBe(200);
    expect(b.body).not.toHaveProperty('refresh_token');

    // offline_access allowed and asked, but the client lacks the refresh_token grant.
    const noGrant = await silentCode(alice, 'no-refresh', NO_REFRESH_REDIRECT, { scope: 'openid offline_access' });
    const c = await redeem(setup.base, noGrant.code, NO_REFRESH_REDIRECT, noGrant.verifier, { clientId: 'no-refresh', secret: NO_REFRESH_SECRET });
    expect(c.status).toBe(200);
    expect(c.body.scope).toBe('openid offline_access');
    expect(c.body).not.toHaveProperty('refresh_token');
  });

  it('uses one role as a string in JWTs and always an array in userinfo', async () => {
    const bob = new Browser();
    const { verifier, challenge } = pkce();
    const page = await authorizeThroughPages(bob, setup.base, codeRequest(setup.base, 'web', WEB_REDIRECT, challenge, { scope: 'openid roles' }), BOB);
    const res = await redeem(setup.base, codeFrom(page, WEB_REDIRECT, setup.issuer), WEB_REDIRECT, verifier, { clientId: 'web', secret: WEB_SECRET });
    expect(res.status).toBe(200);
    expect(decodeJwt(String(res.body.id_token)).payload.role).toBe('viewer');
    expect(decodeJwt(String(res.body.access_token)).payload.role).toBe('viewer');
    const info = await userinfo(setup.base, String(res.body.access_token));
    expect(info.status).toBe(200);
    expect(info.body.role).toStrictEqual(['viewer']);
  });

  describe('the claims parameter', () => {
    const claims = (value: object) => JSON.stringify(value);

    it('releases a listed claim of a scope the client may use, without that scope being asked', async () => {
      const { code, verifier } = await silentCode(alice, 'web', WEB_REDIRECT, {
        scope: 'openid', claims: claims({ userinfo: { email: null }, id_token: { email: null } }),
      });
      const res = await redeem(setup.base, code, WEB_REDIRECT, verifier, { clientId: 'web', secret: WEB_SECRET });
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('openid');
      const id = decodeJwt(String(res.body.id_token)).payload;
      expect(id.email).toBe('alice@example.com');
      expect(id).not.toHaveProperty('name');
      const info = await userinfo(setup.base, String(res.body.access_token));
      expect(info.status).toBe(200);
      expect(info.body.email).toBe('alice@example.com');
      expect(info.body).not.toHaveProperty('phone_number');
    });

    it('never releases a claim of a scope the client may not use', async () => {
      // no-refresh may use email but neither phone nor profile.
      const { code, verifier } = await silentCode(alice, 'no-refresh', NO_REFRESH_REDIRECT, {
        scope: 'openid',
        claims: claims({ userinfo: { phone_number: null, email: null }, id_token: { phone_number: { essential: true }, name: null, email: null } }),
      });
      const res = await redeem(setup.base, code, NO_REFRESH_REDIRECT, verifier, { clientId: 'no-refresh', secret: NO_REFRESH_SECRET });
      expect(res.status).toBe(200);
      const id = decodeJwt(String(res.body.id_token)).payload;
      expect(id.email).toBe('alice@example.com');
      expect(id).not.toHaveProperty('phone_number');
      expect(id).not.toHaveProperty('name');
      const info = await userinfo(setup.base, String(res.body.access_token));
      expect(info.status).toBe(200);
      expect(info.body.email).toBe('alice@example.com');
      expect(info.body).not.toHaveProperty('phone_number');
    });

    it('never releases a claim of a scope the user did not consent to', async () => {
      const browser = new Browser();
      const { verifier, challenge } = pkce();
      let page = await browser.follow(await browser.get(codeRequest(setup.base, 'consenting', CONSENT_REDIRECT, challenge, {
        scope: 'openid', claims: claims({ userinfo: { email: null }, id_token: { email: null } }),
      })), setup.base);
      expectSignInPage(page);
      page = await browser.follow(await submitSignIn(browser, page, ALICE), setup.base);
      expectConsentPage(page);
      page = await submitConsent(browser, page, 'allow');
      const res = await redeem(setup.base, codeFrom(page, CONSENT_REDIRECT, setup.issuer), CONSENT_REDIRECT, verifier, { clientId: 'consenting', secret: CONSENT_SECRET });
      expect(res.status).toBe(200);
      expect(decodeJwt(String(res.body.id_token)).payload).not.toHaveProperty('email');
      const info = await userinfo(setup.base, String(res.body.access_token));
      expect(info.status).toBe(200);
      expect(info.body).not.toHaveProperty('email');
    });
  });
});
