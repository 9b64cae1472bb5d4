/**
 * The refresh token grant from outside, on two instances sharing one PostgreSQL database and one
 * Redis (as behind a load balancer): openid-client as the relying party for the happy path;
 * rotation (a new opaque refresh token every time, the shape of the code exchange); scope
 * narrowing and widening; concurrent refreshes and the grace window answering byte-identical
 * bodies on either instance; and every refusal of RFC 6749 §5.2 and the refresh states
 * for this grant (unknown, another client's, user removed/locked/flagged, client disabled).
 */
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable, redisAvailable } from '../helpers/services.ts';
import {
  ALICE, BOB, OTHER, SERVICE, SPA, TO_DISABLE, WEB, basic, decodeJwt, expectActive, expectOAuthError,
  expectUserinfoAccepted, idpOk, postForm, propagation, refresh, relyingParty, seedFor, signInTokens, startCluster,
  token, userinfo, type Cluster, type HttpResponse, type Tokens, type User,
} from './token-lifecycle-support.ts';

const CAROL: User = { username: 'carol', password: 'her password long enough 1' };
const DAVE: User = { username: 'dave', password: 'his password long enough 22' };
const ERIN: User = { username: 'erin', password: 'a password long enough 333' };
const FRANK: User = { username: 'frank', password: 'one password long enough 4' };

/** Every member of a successful code exchange with openid and offline_access. */
const FULL_RESPONSE = ['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type'];

function expectTokenResponse(res: HttpResponse): Tokens {
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('cache-control')).toMatch(/no-store/);
  return res.body as unknown as Tokens;
}

/** An opaque refresh token: not a JWT, at least 256 bits of base64url. */
function expectOpaque(refreshToken: unknown): void {
  expect(typeof refreshToken).toBe('string');
  const value = String(refreshToken);
  expect(value).toMatch(/^[A-Za-z0-9_-]+$/);
  expect(value.split('.').length).toBe(1);
  expect(Buffer.from(value, 'base64url').length).toBeGreaterThanOrEqual(32);
}

describe.runIf(postgresAvailable && redisAvailable)('the refresh token grant on two instances (one database, one Redis)', () => {
  let cluster: Cluster;
  /** Each instance's own address (the public base URL is the first one's). */
  let a: string;
  let b: string;

  beforeAll(async () => {
    cluster = await startCluster({
      instances: 2,
      redis: true,
      // A generous window, so that "inside the window" holds on a slow machine.
      env: { IDP_REFRESH_TOKEN_REUSE_GRACE: '30' },
      seed: seedFor([ALICE, BOB, CAROL, DAVE, ERIN, FRANK]),
    });
    a = cluster.servers[0]?.url ?? '';
    b = cluster.servers[1]?.url ?? '';
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  describe('rotation', () => {
    it('gives openid-client a new opaque refresh token at every refresh, in the shape of the code exchange', async () => {
      const first = await signInTokens(cluster, ALICE, WEB);
      expect(Object.keys(first).sort()).toStrictEqual(FULL_RESPONSE);
      expectOpaque(first.refresh_token);
      const firstId = decodeJwt(first.id_token ?? '').payload;

      const config = await relyingParty(cluster, WEB);
      const second = await client.refreshTokenGrant(config, first.refresh_token);
      expect(Object.keys(second).filter((k) => typeof (second as Record<string, unknown>)[k] !== 'function').sort()).toStrictEqual(FULL_RESPONSE);
      expectOpaque(second.refresh_token);
      expect(second.refresh_token).not.toBe(first.refresh_token);
      expect(second.access_token).not.toBe(first.access_token);
      expect(second.token_type.toLowerCase()).toBe('bearer');
      expect(second.expires_in).toBe(900);
      expect(second.scope).toBe(first.scope);

      // openid-client checked the refreshed ID token; these are the values it must carry.
      const id = decodeJwt(second.id_token ?? '').payload;
      expect(id).toMatchObject({ iss: cluster.issuer, aud: 'web', sub: firstId.sub, auth_time: firstId.auth_time, amr: ['pwd'], name: 'Alice Tester' });
      expect(id).not.toHaveProperty('nonce');
      const access = decodeJwt(second.access_token).payload;
      expect(access).toMatchObject({ iss: cluster.issuer, sub: firstId.sub, client_id: 'web', scope: first.scope });
      expect(access.jti).not.toBe(decodeJwt(first.access_token).payload.jti);
      expect(Number(access.exp) - Number(access.iat)).toBe(900);

      const info = await client.fetchUserInfo(config, second.access_token, String(firstId.sub));
      expect(info).toMatchObject({ sub: firstId.sub, name: 'Alice Tester' });

      // The newest token refreshes again, and so on.
      const third = await client.refreshTokenGrant(config, second.refresh_token ?? '');
      expectOpaque(third.refresh_token);
      expect(new Set([first.refresh_token, second.refresh_token, third.refresh_token]).size).toBe(3);
    });

    it('refreshes a public client by client_id alone', async () => {
      const first = await signInTokens(cluster, BOB, SPA);
      const second = expectTokenResponse(await refresh(a, SPA, first.refresh_token));
      expect(Object.keys(second).sort()).toStrictEqual(FULL_RESPONSE);
      expect(second.refresh_token).not.toBe(first.refresh_token);
      expect(second.expires_in).toBe(3600);
      expect(decodeJwt(second.id_token ?? '').payload.aud).toBe('spa');
      await expectUserinfoAccepted(a, second.access_token);
    });

    it('accepts client_secret_post as well as Basic', async () => {
      const first = await signInTokens(cluster, ALICE, WEB);
      const res = await postForm(`${a}/connect/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: 'web', client_secret: WEB.secret ?? '' });
      expect(expectTokenResponse(res).refresh_token).not.toBe(first.refresh_token);
    });

    it('keeps the granted scope when none is asked for, and narrows to a subset when asked', async () => {
      const first = await signInTokens(cluster, ALICE, WEB, 'openid profile email offline_access');
      expect(first.scope.split(' ').sort()).toStrictEqual(['email', 'offline_access', 'openid', 'profile']);

      const narrowed = expectTokenResponse(await refresh(a, WEB, first.refresh_token, { scope: 'openid offline_access' }));
      expect(narrowed.scope).toBe('openid offline_access');
      expect(decodeJwt(narrowed.access_token).payload.scope).toBe('openid offline_access');
      const id = decodeJwt(narrowed.id_token ?? '').payload;
      expect(id).not.toHaveProperty('name');
      expect(id).not.toHaveProperty('email');
      const info = await userinfo(a, narrowed.access_token);
      expect(info.status).toBe(200);
      expect(info.body).not.toHaveProperty('name');
      expect(info.body).not.toHaveProperty('email');

      // RFC 6749 §6: without `scope`, the scope originally granted.
      const again = expectTokenResponse(await refresh(a, WEB, narrowed.refresh_token));
      expect(again.scope.split(' ').sort()).toStrictEqual(['email', 'offline_access', 'openid', 'profile']);
      expect(decodeJwt(again.id_token ?? '').payload.email).toBe('alice@example.com');
    });

    it('never widens the scope (invalid_scope), and the refused refresh leaves the token usable', async () => {
      const first = await signInTokens(cluster, ALICE, WEB, 'openid offline_access');
      // email: allowed to the client, not granted to this token.
      expectOAuthError(await refresh(a, WEB, first.refresh_token, { scope: 'openid offline_access email' }), 400, 'invalid_scope');
      // orders.write: not even allowed to the client.
      expectOAuthError(await refresh(a, WEB, first.refresh_token, { scope: 'orders.write' }), 400, 'invalid_scope');
      const next = expectTokenResponse(await refresh(a, WEB, first.refresh_token));
      expect(next.scope).toBe('openid offline_access');
    });
  });

  describe('the grace window', () => {
    it('answers two concurrent refreshes with one token with byte-identical bodies', async () => {
      const first = await signInTokens(cluster, ALICE, WEB);
      const [one, two] = await Promise.all([refresh(a, WEB, first.refresh_token), refresh(a, WEB, first.refresh_token)]);
      expectTokenResponse(one as HttpResponse);
      expectTokenResponse(two as HttpResponse);
      expect(two?.text).toBe(one?.text);
      const successor = (one as HttpResponse).body as unknown as Tokens;
      expect(successor.refresh_token).not.toBe(first.refresh_token);
      // The one successor is current: it refreshes, and its access token is good.
      await expectUserinfoAccepted(a, successor.access_token);
      expectTokenResponse(await refresh(a, WEB, successor.refresh_token));
    });

    it('gives the previous token the identical successor response again inside the window, without a new rotation', async () => {
      const first = await signInTokens(cluster, BOB, WEB);
      const rotated = await refresh(a, WEB, first.refresh_token);
      const successor = expectTokenResponse(rotated);
      const retry = await refresh(a, WEB, first.refresh_token);
      expectTokenResponse(retry);
      expect(retry.text).toBe(rotated.text);
      // Still the same successor: its access token is live, the family is not revoked.
      await expectActive(a, WEB, successor.access_token);
      await expectActive(a, WEB, successor.refresh_token);
      await expectUserinfoAccepted(a, first.access_token);
    });

    it('gives the identical successor response when the retry reaches the other instance', async () => {
      const first = await signInTokens(cluster, ALICE, WEB);
      const rotated = await refresh(a, WEB, first.refresh_token);
      const successor = expectTokenResponse(rotated);
      const retry = await refresh(b, WEB, first.refresh_token);
      expectTokenResponse(retry);
      expect(retry.text).toBe(rotated.text);
      // The successor carries on at the other instance, and the tokens are known there.
      await expectActive(b, WEB, successor.access_token);
      await expectUserinfoAccepted(b, successor.access_token);
      const third = expectTokenResponse(await refresh(b, WEB, successor.refresh_token));
      expect(third.refresh_token).not.toBe(successor.refresh_token);
      // The first token, still inside its window, still gets its own successor response.
      expect((await refresh(b, WEB, first.refresh_token)).text).toBe(rotated.text);
    });

    it('answers concurrent refreshes sent to both instances at once with byte-identical bodies', async () => {
      const first = await signInTokens(cluster, BOB, WEB);
      const [one, two] = await Promise.all([refresh(a, WEB, first.refresh_token), refresh(b, WEB, first.refresh_token)]);
      expectTokenResponse(one as HttpResponse);
      expectTokenResponse(two as HttpResponse);
      expect(two?.text).toBe(one?.text);
    });
  });

  describe('refusals (RFC 6749 §5.2 token errors)', () => {
    let tokens: Tokens;
    beforeAll(async () => {
      tokens = await signInTokens(cluster, ALICE, WEB);
    });

    it('requires the refresh_token parameter (invalid_request)', async () => {
      expectOAuthError(await token(a, WEB, { grant_type: 'refresh_token' }), 400, 'invalid_request');
    });

    it('refuses a repeated refresh_token parameter (invalid_request)', async () => {
      const body = `grant_type=refresh_token&refresh_token=${tokens.refresh_token}&refresh_token=${tokens.refresh_token}`;
      const res = await fetch(`${a}/connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('web', WEB.secret ?? '') },
        body,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
    });

    it('refuses an unknown refresh token, and an access token presented as one (invalid_grant)', async () => {
      expectOAuthError(await refresh(a, WEB, 'x'.repeat(43)), 400, 'invalid_grant');
      expectOAuthError(await refresh(a, WEB, tokens.access_token), 400, 'invalid_grant');
    });

    it('refuses another client\'s refresh token without rotating it: its own client still refreshes with it', async () => {
      const own = await signInTokens(cluster, BOB, WEB);
      expectOAuthError(await refresh(a, OTHER, own.refresh_token), 400, 'invalid_grant');
      expectOAuthError(await refresh(a, SPA, own.refresh_token), 400, 'invalid_grant');
      const next = expectTokenResponse(await refresh(a, WEB, own.refresh_token));
      expect(next.refresh_token).not.toBe(own.refresh_token);
      // Not a reuse either: the family lives on.
      await expectActive(a, WEB, next.refresh_token);
    });

    it('answers bad client authentication with 401 invalid_client', async () => {
      expectOAuthError(await refresh(a, { clientId: 'web', secret: 'wrong-secret-0123456789abcdefghijklmnop' }, tokens.refresh_token), 401, 'invalid_client');
      expectOAuthError(await refresh(a, { clientId: 'nobody', secret: 'whatever-0123456789abcdefghijklmnopqrs' }, tokens.refresh_token), 401, 'invalid_client');
      // A confidential client naming itself without its secret.
      expectOAuthError(await refresh(a, { clientId: 'web' }, tokens.refresh_token), 401, 'invalid_client');
      expectOAuthError(await postForm(`${a}/connect/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }), 401, 'invalid_client');
      // None of this touched the token.
      expectTokenResponse(await refresh(a, WEB, tokens.refresh_token));
    });

    it('refuses the grant to a client without it, and an unknown grant type', async () => {
      const res = await refresh(a, SERVICE, tokens.refresh_token);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toBe('unauthorized_client');
      expectOAuthError(await token(a, WEB, { grant_type: 'password', username: 'alice', password: ALICE.password }), 400, 'unsupported_grant_type');
      expectOAuthError(await token(a, WEB, { refresh_token: tokens.refresh_token }), 400, 'invalid_request');
    });
  });

  describe('the user and the client', () => {
    const cases: Array<{ who: User; command: string[]; what: string }> = [
      { who: CAROL, command: ['users', 'remove', 'carol'], what: 'removed' },
      { who: DAVE, command: ['users', 'lock', 'dave'], what: 'locked' },
      { who: ERIN, command: ['users', 'require-password-change', 'erin'], what: 'must change password' },
      { who: FRANK, command: ['users', 'require-mfa', 'frank'], what: 'must enrol in MFA' },
    ];

    for (const { who, command, what } of cases) {
      it(`refuses a refresh with invalid_grant when the user ${what} (idp ${command.join(' ')})`, async () => {
        const tokens = await signInTokens(cluster, who, WEB);
        // The token works until the administrator acts.
        const before = expectTokenResponse(await refresh(a, WEB, tokens.refresh_token));
        await idpOk(cluster, command);
        expectOAuthError(await refresh(a, WEB, before.refresh_token), 400, 'invalid_grant');
        expectOAuthError(await refresh(b, WEB, before.refresh_token), 400, 'invalid_grant');
      });
    }

    it('answers a refresh by a disabled client with 401 invalid_client, on every instance', async () => {
      const tokens = await signInTokens(cluster, ALICE, TO_DISABLE, 'openid offline_access');
      const before = expectTokenResponse(await refresh(a, TO_DISABLE, tokens.refresh_token));
      await idpOk(cluster, ['clients', 'disable', 'to-disable']);
      await propagation();
      expectOAuthError(await refresh(a, TO_DISABLE, before.refresh_token), 401, 'invalid_client');
      expectOAuthError(await refresh(b, TO_DISABLE, before.refresh_token), 401, 'invalid_client');
    });
  });
});
