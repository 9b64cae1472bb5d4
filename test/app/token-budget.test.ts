/**
 * The token endpoint's budgets (IDP_TOKEN_RATE_LIMIT=4, IDP_TRUST_PROXY=true, so X-Forwarded-For
 * is the source address), from outside the app running in this process: requests that name a
 * client and fail (a junk refresh token or code, an unsupported grant, failed authentication, an
 * unregistered origin) spend their address's budget and never the client's, so they cannot lock
 * the client's users out; requests answered with tokens still spend the client's budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, Browser, OTHER_SECRET, SEED, SPA_REDIRECT, authorizeThroughPages, codeFrom, codeRequest, pkce, redeem } from '../e2e/code-flow-support.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';
import { refresh, sleep, token, type ClientCredentials, type HttpResponse } from '../helpers/relying-party.ts';

const LIMIT = 4;
const SPA: ClientCredentials = { clientId: 'spa' };
const OTHER: ClientCredentials = { clientId: 'other', secret: OTHER_SECRET };

/** Waits, when needed, so that the steps of a test fall in one one-minute window of the budgets. */
async function roomInWindow(seconds: number): Promise<void> {
  const intoMinute = (Date.now() / 1000) % 60;
  if (60 - intoMinute < seconds) await sleep((60 - intoMinute) * 1000 + 300);
}

const from = (address: string) => ({ 'x-forwarded-for': address });

function expectError(res: HttpResponse, status: number, code: string, what: string): void {
  expect(res.body.error, `${what}: ${res.text}`).toBe(code);
  expect(res.status, what).toBe(status);
}

/** 429 slow_down, its Retry-After the seconds to the next minute. */
function expectSlowDown(res: HttpResponse, what: string): void {
  expectError(res, 429, 'slow_down', what);
  expect(res.headers.get('retry-after'), what).toMatch(/^\d+$/);
  const seconds = Number(res.headers.get('retry-after'));
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
}

function expectTokens(res: HttpResponse, what: string): void {
  expect(res.status, `${what}: ${res.text}`).toBe(200);
  expect(typeof res.body.access_token, what).toBe('string');
}

describe(`the token endpoint's budgets (IDP_TOKEN_RATE_LIMIT=${LIMIT})`, () => {
  let app: InProcessApp;

  beforeAll(async () => {
    app = await startInProcess({ seed: SEED, env: { IDP_TOKEN_RATE_LIMIT: String(LIMIT), IDP_TRUST_PROXY: 'true' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Alice's refresh token for the public client: the code exchange is the client's first request. */
  async function spaRefreshToken(): Promise<string> {
    const { verifier, challenge } = pkce();
    const page = await authorizeThroughPages(new Browser(), app.base, codeRequest(app.base, 'spa', SPA_REDIRECT, challenge, { scope: 'openid offline_access' }), ALICE);
    const exchanged = await redeem(app.base, codeFrom(page, SPA_REDIRECT, app.issuer), SPA_REDIRECT, verifier, SPA);
    expectTokens(exchanged, 'the code exchange');
    return String(exchanged.body.refresh_token);
  }

  it('lets nobody spend a public client\'s budget by naming it in failing requests', async () => {
    await roomInWindow(40);
    let refreshToken = await spaRefreshToken();

    // One address fails in every way a request naming the client can fail.
    const attacker = '198.51.100.7';
    expectError(await refresh(app.base, SPA, 'junk', {}, from(attacker)), 400, 'invalid_grant', 'a junk refresh token');
    expectError(await token(app.base, SPA, { grant_type: 'authorization_code', code: 'junk', redirect_uri: SPA_REDIRECT, code_verifier: pkce().verifier }, from(attacker)), 400, 'invalid_grant', 'a junk code');
    expectError(await token(app.base, SPA, { grant_type: 'password', username: 'alice', password: 'x' }, from(attacker)), 400, 'unsupported_grant_type', 'an unsupported grant');
    expectError(await token(app.base, SPA, { grant_type: 'refresh_token', refresh_token: 'junk', client_secret: 'guess' }, from(attacker)), 401, 'invalid_client', 'a public client sending a secret');
    // Its failures are bounded by its address's budget.
    expectSlowDown(await refresh(app.base, SPA, 'junk', {}, from(attacker)), 'the attacker\'s 5th request');
    // Failures from other addresses are refused for what they are, not for the client's budget.
    for (const address of ['198.51.100.8', '198.51.100.9', '198.51.100.10']) {
      expectError(await refresh(app.base, SPA, 'junk', {}, from(address)), 400, 'invalid_grant', `a junk refresh token from ${address}`);
    }
    const elsewhere = { ...from('198.51.100.11'), origin: 'https://evil.test' };
    expectError(await refresh(app.base, SPA, refreshToken, {}, elsewhere), 400, 'invalid_request', 'an origin the client did not register');

    // The client's users are served: 1 code exchange + 3 refreshes spend its budget of 4.
    for (const [i, address] of ['203.0.113.1', '203.0.113.2', '203.0.113.3'].entries()) {
      const refreshed = await refresh(app.base, SPA, refreshToken, {}, from(address));
      expectTokens(refreshed, `the user's refresh ${i + 1}`);
      refreshToken = String(refreshed.body.refresh_token);
    }
    expectSlowDown(await refresh(app.base, SPA, refreshToken, {}, from('203.0.113.4')), 'a 5th successful request of the client');
  });

  it('lets nobody spend a confidential client\'s budget with wrong secrets', async () => {
    await roomInWindow(20);
    const attacker = '198.51.100.20';
    const grant = { grant_type: 'client_credentials', scope: 'orders.read' };
    for (let i = 1; i <= LIMIT; i++) {
      expectError(await token(app.base, { ...OTHER, secret: `wrong-${i}` }, grant, from(attacker)), 401, 'invalid_client', `wrong secret ${i}`);
    }
    expectSlowDown(await token(app.base, OTHER, grant, from(attacker)), 'the attacker\'s address, even with the right secret');
    for (let i = 1; i <= LIMIT; i++) expectTokens(await token(app.base, OTHER, grant, from(`203.0.113.${20 + i}`)), `the client's request ${i}`);
    expectSlowDown(await token(app.base, OTHER, grant, from('203.0.113.30')), 'the client\'s 5th successful request');
  });
});
