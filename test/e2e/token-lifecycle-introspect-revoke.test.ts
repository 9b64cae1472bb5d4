/**
 * The client credentials grant, introspection (RFC 7662) and revocation (RFC 7009) from outside,
 * with openid-client as the relying party and raw HTTP for every refusal; then per-client CORS
 * at the token, userinfo and revocation endpoints, none at introspection, any origin at
 * discovery and JWKS.
 */
import { generateKeyPair, SignJWT } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/services.ts';
import {
  ALICE, BOB, OTHER, OTHER_ORIGIN, SERVICE, SPA, SPA_ORIGIN, STRANGER_ORIGIN, WEB, WEB_ORIGIN, clientPost, decodeJwt,
  expectActive, expectInactive, expectOAuthError, expectUserinfoAccepted, expectUserinfoRefused, introspect, postForm,
  refresh, relyingParty, request, revoke, seedFor, signInTokens, sleep, startCluster, token, userinfo,
  type Cluster, type ClientCredentials, type HttpResponse,
} from './token-lifecycle-support.ts';

const BRIEF: ClientCredentials = { clientId: 'brief', secret: 'brief-lifecycle-secret-0123456789abcdefgh' };

/** Exactly the members of an active introspection response (RFC 7662 §2.2). */
const ACTIVE_MEMBERS = ['active', 'client_id', 'exp', 'iat', 'iss', 'scope', 'sub', 'token_type'];

function expectNoCors(res: HttpResponse | Response): void {
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
}

/** A CORS preflight for a POST (or GET) with an Authorization header. */
function preflight(url: string, origin: string, method = 'POST'): Promise<Response> {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type' },
  });
}

describe.runIf(postgresAvailable)('client credentials, introspection, revocation and CORS', () => {
  let cluster: Cluster;
  let base: string;

  beforeAll(async () => {
    const seed = seedFor();
    seed.clients.push({
      client_id: BRIEF.clientId, client_secret: BRIEF.secret, display_name: 'Short-lived tokens',
      grant_types: ['client_credentials'], scopes: ['orders.read'], access_token_lifetime: 2,
    } as (typeof seed.clients)[number]);
    cluster = await startCluster({ seed });
    base = cluster.base;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  describe('client credentials', () => {
    it('gives openid-client an access token for the client itself: sub = client ID, name = display name, no refresh or ID token', async () => {
      const config = await relyingParty(cluster, SERVICE);
      const res = await client.clientCredentialsGrant(config, { scope: 'orders.read' });
      expect(Object.keys(res).filter((k) => typeof (res as Record<string, unknown>)[k] !== 'function').sort())
        .toStrictEqual(['access_token', 'expires_in', 'scope', 'token_type']);
      expect(res.token_type.toLowerCase()).toBe('bearer');
      expect(res.expires_in).toBe(3600);
      expect(res.scope).toBe('orders.read');
      const { header, payload } = decodeJwt(res.access_token);
      expect(header.alg).toBe('RS256');
      expect(payload).toMatchObject({ iss: cluster.issuer, sub: 'service', client_id: 'service', name: 'Order service', scope: 'orders.read' });
      expect(payload).not.toHaveProperty('aud');
      expect(Number(payload.exp) - Number(payload.iat)).toBe(3600);

      // Its own client sees it active through introspection; userinfo has no user to show.
      const info = await client.tokenIntrospection(config, res.access_token);
      expect(info).toMatchObject({ active: true, sub: 'service', client_id: 'service', scope: 'orders.read', token_type: 'Bearer' });
      await expectUserinfoRefused(base, res.access_token);
    });

    it('grants the scopes asked for, each of them allowed, else invalid_scope', async () => {
      const both = await token(base, SERVICE, { grant_type: 'client_credentials', scope: 'orders.read orders.write' });
      expect(both.status, both.text).toBe(200);
      expect(String(both.body.scope).split(' ').sort()).toStrictEqual(['orders.read', 'orders.write']);
      expect(decodeJwt(String(both.body.access_token)).payload.scope).toBe(both.body.scope);

      const one = await token(base, SERVICE, { grant_type: 'client_credentials', scope: 'orders.write' });
      expect(one.body.scope).toBe('orders.write');

      expectOAuthError(await token(base, SERVICE, { grant_type: 'client_credentials', scope: 'orders.read invoices.read' }), 400, 'invalid_scope');
      // `other` may use the grant and orders.read, not orders.write.
      expectOAuthError(await token(base, OTHER, { grant_type: 'client_credentials', scope: 'orders.write' }), 400, 'invalid_scope');
      expect((await token(base, OTHER, { grant_type: 'client_credentials', scope: 'orders.read' })).status).toBe(200);
    });

    it('never issues a refresh token, even when offline_access is asked for', async () => {
      const res = await token(base, OTHER, { grant_type: 'client_credentials', scope: 'orders.read offline_access' });
      expect(res.body, res.text).not.toHaveProperty('refresh_token');
      expect(res.body).not.toHaveProperty('id_token');
    });

    it('refuses bad client authentication with 401 invalid_client, and a client without the grant', async () => {
      expectOAuthError(await token(base, { clientId: 'service', secret: 'not-the-secret-0123456789abcdefghijklmn' }, { grant_type: 'client_credentials' }), 401, 'invalid_client');
      expectOAuthError(await postForm(`${base}/connect/token`, { grant_type: 'client_credentials' }), 401, 'invalid_client');
      const web = await token(base, WEB, { grant_type: 'client_credentials', scope: 'orders.read' });
      expect(web.status, web.text).toBe(400);
      expect(web.body.error).toBe('unauthorized_client');
    });
  });

  describe('introspection', () => {
    it('describes an active access token and refresh token to openid-client with exactly the members RFC 7662 §2.2 names', async () => {
      const tokens = await signInTokens(cluster, ALICE, WEB, 'openid profile offline_access');
      const config = await relyingParty(cluster, WEB);
      const access = decodeJwt(tokens.access_token).payload;

      const forAccess = await client.tokenIntrospection(config, tokens.access_token);
      expect(forAccess).toStrictEqual({
        active: true, iss: cluster.issuer, sub: access.sub, client_id: 'web', scope: 'openid profile offline_access',
        token_type: 'Bearer', iat: access.iat, exp: access.exp,
      });

      const raw = await introspect(base, WEB, tokens.refresh_token, { token_type_hint: 'refresh_token' });
      expect(raw.status).toBe(200);
      expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
      expect(raw.headers.get('cache-control')).toMatch(/no-store/);
      expect(Object.keys(raw.body).sort()).toStrictEqual(ACTIVE_MEMBERS);
      expect(raw.body).toMatchObject({ active: true, iss: cluster.issuer, sub: access.sub, client_id: 'web', scope: 'openid profile offline_access', token_type: 'Bearer' });
      const now = Math.floor(Date.now() / 1000);
      expect(Number.isInteger(raw.body.iat) && Number.isInteger(raw.body.exp)).toBe(true);
      expect(Math.abs(Number(raw.body.iat) - now)).toBeLessThanOrEqual(60);
      expect(Number(raw.body.exp)).toBeGreaterThan(now);

      // A wrong hint changes nothing (RFC 7662 §2.1).
      expect((await introspect(base, WEB, tokens.access_token, { token_type_hint: 'refresh_token' })).body.active).toBe(true);
      expect((await introspect(base, WEB, tokens.refresh_token, { token_type_hint: 'access_token' })).body.active).toBe(true);
      // client_secret_post is accepted too.
      const post = await postForm(`${base}/connect/introspect`, { token: tokens.access_token, client_id: 'web', client_secret: WEB.secret ?? '' });
      expect(post.body.active).toBe(true);
    });

    it('answers exactly {"active":false} for unknown, foreign-signed, rotated-out, expired and other clients\' tokens', async () => {
      const tokens = await signInTokens(cluster, BOB, WEB);
      const inactive = async (who: ClientCredentials, value: string) => {
        const res = await introspect(base, who, value);
        expect(res.status, res.text).toBe(200);
        expect(res.text.replace(/\s/g, '')).toBe('{"active":false}');
      };
      await inactive(WEB, 'no-such-token');
      await inactive(WEB, 'a'.repeat(43));
      // Issued to web: other may not learn anything about it.
      await inactive(OTHER, tokens.access_token);
      await inactive(OTHER, tokens.refresh_token);

      // A JWT that claims to be ours but is signed by a key of someone else's, with our kid.
      const { privateKey } = await generateKeyPair('RS256');
      const real = decodeJwt(tokens.access_token);
      const forged = await new SignJWT({ ...real.payload })
        .setProtectedHeader({ alg: 'RS256', kid: String(real.header.kid), typ: String(real.header.typ) })
        .sign(privateKey);
      await inactive(WEB, forged);
      await expectUserinfoRefused(base, forged);

      // A rotated-out refresh token is no longer active (even inside the grace window).
      const next = await refresh(base, WEB, tokens.refresh_token);
      expect(next.status).toBe(200);
      await inactive(WEB, tokens.refresh_token);
      await expectActive(base, WEB, String(next.body.refresh_token));

      // An expired access token (the client's lifetime is 2 seconds).
      const brief = await token(base, BRIEF, { grant_type: 'client_credentials', scope: 'orders.read' });
      expect(brief.status).toBe(200);
      await expectActive(base, BRIEF, String(brief.body.access_token));
      await sleep(3100);
      await inactive(BRIEF, String(brief.body.access_token));
    });

    it('refuses public clients (401 invalid_client) even for their own tokens', async () => {
      const tokens = await signInTokens(cluster, ALICE, SPA);
      const res = await introspect(base, SPA, tokens.access_token);
      expectOAuthError(res, 401, 'invalid_client');
      expect(res.body).not.toHaveProperty('active');
    });

    it('refuses bad client authentication with 401 invalid_client, and a missing token with invalid_request', async () => {
      const tokens = await signInTokens(cluster, ALICE, WEB);
      expectOAuthError(await introspect(base, { clientId: 'web', secret: 'wrong-secret-0123456789abcdefghijklmnop' }, tokens.access_token), 401, 'invalid_client');
      expectOAuthError(await introspect(base, { clientId: 'nobody', secret: 'wrong-secret-0123456789abcdefghijklmnop' }, tokens.access_token), 401, 'invalid_client');
      expectOAuthError(await postForm(`${base}/connect/introspect`, { token: tokens.access_token }), 401, 'invalid_client');
      const missing = await clientPost(base, '/connect/introspect', WEB, {});
      expect(missing.body.error, missing.text).toBe('invalid_request');
      expect(missing.status).toBeGreaterThanOrEqual(400);
      expect(missing.status).toBeLessThan(500);
    });
  });

  describe('revocation', () => {
    it('revokes a refresh token\'s whole family and the access tokens issued from it (openid-client)', async () => {
      const first = await signInTokens(cluster, ALICE, WEB);
      const second = await refresh(base, WEB, first.refresh_token);
      expect(second.status).toBe(200);
      const current = String(second.body.refresh_token);
      const currentAccess = String(second.body.access_token);
      await expectUserinfoAccepted(base, currentAccess);
      await expectUserinfoAccepted(base, first.access_token);

      const config = await relyingParty(cluster, WEB);
      await client.tokenRevocation(config, current, { token_type_hint: 'refresh_token' });

      expectOAuthError(await refresh(base, WEB, current), 400, 'invalid_grant');
      await expectInactive(base, WEB, current);
      for (const access of [first.access_token, currentAccess]) {
        await expectInactive(base, WEB, access);
        await expectUserinfoRefused(base, access);
      }
      // Revoking again, or the rotated-out token, is still a plain 200.
      expect((await revoke(base, WEB, current)).status).toBe(200);
      expect((await revoke(base, WEB, first.refresh_token)).status).toBe(200);
    });

    it('revokes an access token: userinfo and introspection refuse it', async () => {
      const tokens = await signInTokens(cluster, BOB, WEB);
      await expectActive(base, WEB, tokens.access_token);
      const res = await revoke(base, WEB, tokens.access_token, { token_type_hint: 'access_token' });
      expect(res.status, res.text).toBe(200);
      await expectInactive(base, WEB, tokens.access_token);
      await expectUserinfoRefused(base, tokens.access_token);
    });

    it('follows the token, not the hint (RFC 7009 §2.1)', async () => {
      const tokens = await signInTokens(cluster, BOB, WEB);
      expect((await revoke(base, WEB, tokens.refresh_token, { token_type_hint: 'access_token' })).status).toBe(200);
      expectOAuthError(await refresh(base, WEB, tokens.refresh_token), 400, 'invalid_grant');
      const more = await signInTokens(cluster, BOB, WEB);
      expect((await revoke(base, WEB, more.access_token, { token_type_hint: 'refresh_token' })).status).toBe(200);
      await expectUserinfoRefused(base, more.access_token);
    });

    it('lets a public client revoke its own refresh token by client_id', async () => {
      const tokens = await signInTokens(cluster, BOB, SPA);
      expect((await revoke(base, SPA, tokens.refresh_token)).status).toBe(200);
      expectOAuthError(await refresh(base, SPA, tokens.refresh_token), 400, 'invalid_grant');
      await expectUserinfoRefused(base, tokens.access_token);
    });

    it('answers 200 and revokes nothing for unknown tokens and other clients\' tokens', async () => {
      const tokens = await signInTokens(cluster, ALICE, WEB);
      expect((await revoke(base, WEB, 'no-such-token')).status).toBe(200);
      expect((await revoke(base, WEB, 'b'.repeat(43), { token_type_hint: 'refresh_token' })).status).toBe(200);
      for (const who of [OTHER, SPA]) {
        expect((await revoke(base, who, tokens.refresh_token)).status).toBe(200);
        expect((await revoke(base, who, tokens.access_token)).status).toBe(200);
      }
      await expectActive(base, WEB, tokens.access_token);
      await expectUserinfoAccepted(base, tokens.access_token);
      const next = await refresh(base, WEB, tokens.refresh_token);
      expect(next.status, next.text).toBe(200);
    });

    it('refuses bad client authentication with 401 invalid_client and a missing token with invalid_request, revoking nothing', async () => {
      const tokens = await signInTokens(cluster, ALICE, WEB);
      expectOAuthError(await revoke(base, { clientId: 'web', secret: 'wrong-secret-0123456789abcdefghijklmnop' }, tokens.refresh_token), 401, 'invalid_client');
      expectOAuthError(await revoke(base, { clientId: 'nobody', secret: 'wrong-secret-0123456789abcdefghijklmnop' }, tokens.refresh_token), 401, 'invalid_client');
      expectOAuthError(await postForm(`${base}/connect/revoke`, { token: tokens.refresh_token }), 401, 'invalid_client');
      // A confidential client without its secret.
      expectOAuthError(await revoke(base, { clientId: 'web' }, tokens.refresh_token), 401, 'invalid_client');
      const missing = await clientPost(base, '/connect/revoke', WEB, {});
      expect(missing.body.error, missing.text).toBe('invalid_request');
      expect(missing.status).toBeGreaterThanOrEqual(400);
      expect(missing.status).toBeLessThan(500);
      expect((await refresh(base, WEB, tokens.refresh_token)).status).toBe(200);
    });
  });

  describe('CORS', () => {
    it('answers a preflight at token, userinfo and revocation from an origin registered on any client, and no other', async () => {
      for (const path of ['/connect/token', '/connect/revoke', '/connect/userinfo']) {
        for (const origin of [WEB_ORIGIN, SPA_ORIGIN, OTHER_ORIGIN]) {
          const res = await preflight(`${base}${path}`, origin, path === '/connect/userinfo' ? 'GET' : 'POST');
          expect(res.status, `${path} ${origin}`).toBeLessThan(300);
          expect(res.headers.get('access-control-allow-origin'), `${path} ${origin}`).toBe(origin);
          expect(res.headers.get('access-control-allow-headers') ?? '', path).toMatch(/authorization/i);
        }
        const stranger = await preflight(`${base}${path}`, STRANGER_ORIGIN);
        expectNoCors(stranger);
      }
    });

    /**
     * One request per endpoint, as the client `web` (or with a token of `web`), from `origin`.
     * `used` tells whether the request took effect (a refused one must not).
     */
    const endpoints: Array<{ name: string; call(origin: string): Promise<{ res: HttpResponse; used(): Promise<boolean> }> }> = [
      {
        name: 'token',
        async call(origin) {
          const tokens = await signInTokens(cluster, ALICE, WEB);
          const res = await refresh(base, WEB, tokens.refresh_token, {}, { origin });
          // A refused refresh leaves the token current; an accepted one rotated it.
          return { res, used: async () => (await introspect(base, WEB, tokens.refresh_token)).body.active === false };
        },
      },
      {
        name: 'userinfo',
        async call(origin) {
          const tokens = await signInTokens(cluster, ALICE, WEB);
          const res = await userinfo(base, tokens.access_token, { headers: { origin } });
          return { res, used: async () => res.status === 200 };
        },
      },
      {
        name: 'revocation',
        async call(origin) {
          const tokens = await signInTokens(cluster, BOB, WEB);
          const res = await revoke(base, WEB, tokens.refresh_token, {}, { origin });
          return { res, used: async () => (await introspect(base, WEB, tokens.refresh_token)).body.active === false };
        },
      },
    ];

    for (const endpoint of endpoints) {
      it(`serves ${endpoint.name} to an origin registered on the authenticated client, with Access-Control-Allow-Origin`, async () => {
        const { res, used } = await endpoint.call(WEB_ORIGIN);
        expect(res.status, res.text).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBe(WEB_ORIGIN);
        expect(await used()).toBe(true);
      });

      it(`refuses ${endpoint.name} from an origin registered on no client: 400 invalid_request, no CORS headers, no effect`, async () => {
        const { res, used } = await endpoint.call(STRANGER_ORIGIN);
        expect(res.status, res.text).toBe(400);
        expect(res.body.error).toBe('invalid_request');
        expectNoCors(res);
        expect(await used()).toBe(false);
      });

      it(`refuses ${endpoint.name} from an origin registered on another client: 400 invalid_request, no CORS headers, no effect`, async () => {
        // OTHER_ORIGIN passes the preflight (it belongs to `other`), but not the request of `web`.
        const { res, used } = await endpoint.call(OTHER_ORIGIN);
        expect(res.status, res.text).toBe(400);
        expect(res.body.error).toBe('invalid_request');
        expect(await used()).toBe(false);
        expectNoCors(res);
      });
    }

    it('serves the client credentials grant to its client\'s origin only', async () => {
      const cc = await token(base, OTHER, { grant_type: 'client_credentials', scope: 'orders.read' }, { origin: OTHER_ORIGIN });
      expect(cc.status, cc.text).toBe(200);
      expect(cc.headers.get('access-control-allow-origin')).toBe(OTHER_ORIGIN);
      // `service` registers no origin at all.
      const svc = await token(base, SERVICE, { grant_type: 'client_credentials' }, { origin: STRANGER_ORIGIN });
      expectOAuthError(svc, 400, 'invalid_request');
      expectNoCors(svc);
    });
    it('never sends CORS headers from introspection: its preflight is 404, its answers carry none', async () => {
      for (const origin of [WEB_ORIGIN, STRANGER_ORIGIN]) {
        const pre = await preflight(`${base}/connect/introspect`, origin);
        expect(pre.status).toBe(404);
        expectNoCors(pre);
      }
      const tokens = await signInTokens(cluster, ALICE, WEB);
      const res = await introspect(base, WEB, tokens.access_token, {}, { origin: WEB_ORIGIN });
      expectNoCors(res);
      expect(res.headers.get('access-control-allow-methods')).toBeNull();
    });

    it('lets any origin read discovery and the JWKS', async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks']) {
        const res = await request(`${base}${path}`, { headers: { origin: STRANGER_ORIGIN } });
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin'), path).toBe('*');
      }
    });
  });
});
