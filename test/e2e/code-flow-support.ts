/**
 * Shared by the authorization code e2e suites: one seeded server per file on its own PostgreSQL
 * database, the seed (clients and users every suite relies on), and small helpers that drive the
 * browser pages and the token endpoint from outside, the way a relying party would.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { Browser, readForm, type Page } from '../helpers/browser-http.ts';
import { seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/services.ts';
import { basic, jsonBody, pkce, type Pkce } from '../helpers/oauth.ts';

export { basic, pkce, type Pkce };

export const IDP_SECRET = 'd'.repeat(64);

export const WEB_SECRET = 'web-secret-0123456789abcdefghijklmnop';
export const OTHER_SECRET = 'other-secret-0123456789abcdefghijklmnop';
export const NO_REFRESH_SECRET = 'norefresh-secret-0123456789abcdefghijkl';
export const CONSENT_SECRET = 'consent-secret-0123456789abcdefghijklmn';
export const DISABLE_SECRET = 'disable-secret-0123456789abcdefghijklmn';
/** RFC 6749 §2.3.1: id and secret are form-encoded before Basic; these need it ('+', '%', ':', ' '). */
export const ENC_CLIENT_ID = 'enc:client';
export const ENC_SECRET = 'p+s%25:w rd/0123456789abcdefghijklmnopq';

export const WEB_REDIRECT = 'https://rp.test/cb';
export const SPA_REDIRECT = 'https://spa.test/cb';
export const NO_REFRESH_REDIRECT = 'https://norefresh.test/cb';
export const CONSENT_REDIRECT = 'https://consent.test/cb';
export const DISABLE_REDIRECT = 'https://disabled.test/cb';

export const ALICE = { username: 'alice', password: 'correct horse battery staple' };
export const BOB = { username: 'bob', password: 'his own long password 42' };

export const SEED = {
  api_scopes: ['orders.read'],
  clients: [
    {
      client_id: 'web', client_secret: WEB_SECRET, display_name: 'Web shop',
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'phone', 'roles', 'offline_access', 'orders.read'],
      redirect_uris: [WEB_REDIRECT], access_token_lifetime: 900, require_consent: false,
    },
    {
      client_id: 'spa', display_name: 'Single page app',
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'roles', 'offline_access'],
      redirect_uris: [SPA_REDIRECT], require_consent: false,
    },
    {
      // May not use phone or profile: claims of those scopes are never released to it.
      client_id: 'no-refresh', client_secret: NO_REFRESH_SECRET, display_name: 'No refresh',
      grant_types: ['authorization_code'],
      scopes: ['openid', 'email', 'offline_access'],
      redirect_uris: [NO_REFRESH_REDIRECT], require_consent: false,
    },
    {
      client_id: 'consenting', client_secret: CONSENT_SECRET, display_name: 'Consenting app',
      grant_types: ['authorization_code'],
      scopes: ['openid', 'profile', 'email', 'phone'],
      redirect_uris: [CONSENT_REDIRECT], require_consent: true,
    },
    {
      // Registers the same redirect URI as `web`: a code of `web` differs from its own only by client.
      client_id: 'other', client_secret: OTHER_SECRET, display_name: 'Other app',
      grant_types: ['authorization_code', 'client_credentials'],
      scopes: ['openid', 'orders.read'],
      redirect_uris: [WEB_REDIRECT],
    },
    {
      client_id: ENC_CLIENT_ID, client_secret: ENC_SECRET, display_name: 'Encoded credentials',
      grant_types: ['client_credentials'], scopes: ['orders.read'],
    },
    {
      client_id: 'to-disable', client_secret: DISABLE_SECRET, display_name: 'Soon disabled',
      grant_types: ['authorization_code'], scopes: ['openid'],
      redirect_uris: [DISABLE_REDIRECT],
    },
  ],
  users: [
    {
      ...ALICE, given_name: 'Alice', family_name: 'Liddell', name: 'Alice Liddell',
      email: 'alice@example.com', email_verified: true,
      phone_number: '+15555550100', phone_number_verified: false,
      roles: ['admin', 'buyer'],
    },
    // No email, no phone, one role.
    { ...BOB, given_name: 'Bob', family_name: 'Builder', name: 'Bob Builder', roles: ['viewer'] },
  ],
};

export interface Setup {
  db: TestDatabase;
  server: RunningServer;
  base: string;
  issuer: string;
  stop(): Promise<void>;
}

/** A fresh database, seeded, and one server on it. */
export async function startSeededServer(): Promise<Setup> {
  const db = await createTestDatabase();
  const env = { DATABASE_URL: db.url, IDP_SECRET };
  let server: RunningServer | undefined;
  try {
    server = await startServer(env);
    await seedWith(SEED, env);
  } catch (error) {
    await server?.stop();
    await db.drop();
    throw error;
  }
  const running = server;
  return {
    db,
    server: running,
    base: running.url,
    issuer: `${running.url}/`,
    async stop() {
      await running.stop();
      await db.drop();
    },
  };
}


export function authorizeUrl(base: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, v);
  return `${base}/connect/authorize?${query.toString()}`;
}

/** The usual parameters of a valid request; override or drop (undefined) any of them. */
export function codeRequest(
  base: string,
  clientId: string,
  redirectUri: string,
  challenge: string,
  extra: Record<string, string | undefined> = {},
): string {
  return authorizeUrl(base, {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    ...extra,
  });
}

export function isSignInPage(page: Page): boolean {
  return page.status === 200 && /<form[^>]*action="[^"]*\/sign-in"/.test(page.body) && page.body.includes('name="password"');
}

export function isConsentPage(page: Page): boolean {
  return page.status === 200 && /<form[^>]*action="[^"]*\/consent"/.test(page.body) && page.body.includes('value="allow"');
}

export function expectSignInPage(page: Page): void {
  expect(page.status, page.body.slice(0, 300)).toBe(200);
  expect(isSignInPage(page), 'the sign-in page').toBe(true);
}

export function expectConsentPage(page: Page): void {
  expect(page.status, page.body.slice(0, 300)).toBe(200);
  expect(isConsentPage(page), 'the consent page').toBe(true);
}

export async function submitSignIn(browser: Browser, page: Page, user: { username: string; password: string }): Promise<Page> {
  const form = readForm(page.body, page.url);
  return browser.post(form.action, { ...form.fields, username: user.username, password: user.password });
}

export async function submitConsent(browser: Browser, page: Page, decision: 'allow' | 'deny'): Promise<Page> {
  const form = readForm(page.body, page.url);
  return browser.post(form.action, { ...form.fields, decision });
}

/**
 * Walks the pages of an authorization the way a user would: signs in when asked, allows when
 * asked, and returns the answer that leaves the service (normally a redirect to the client).
 */
export async function authorizeThroughPages(
  browser: Browser,
  base: string,
  url: string,
  user: { username: string; password: string },
): Promise<Page> {
  let page = await browser.follow(await browser.get(url), base);
  if (isSignInPage(page)) page = await browser.follow(await submitSignIn(browser, page, user), base);
  if (isConsentPage(page)) page = await browser.follow(await submitConsent(browser, page, 'allow'), base);
  return page;
}

/** The code from a 302 to `redirectUri` (query response mode), after checking the redirect itself. */
export function codeFrom(page: Page, redirectUri: string, issuer: string): string {
  expect(page.status, page.body.slice(0, 300)).toBe(302);
  expect(page.location?.startsWith(`${redirectUri}?`), page.location).toBe(true);
  const params = new URL(page.location ?? '').searchParams;
  expect(params.get('iss')).toBe(issuer);
  expect(params.get('error')).toBeNull();
  const code = params.get('code');
  expect(code).toBeTruthy();
  return code ?? '';
}


export interface JsonResponse {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

export async function postForm(url: string, form: Record<string, string> | string, headers: Record<string, string> = {}): Promise<JsonResponse> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
  });
  const text = await res.text();
  const body = jsonBody(text);
  return { status: res.status, headers: res.headers, body };
}

/** Redeems a code at the token endpoint; confidential clients authenticate with Basic. */
export function redeem(base: string, code: string, redirectUri: string, verifier: string, auth: { clientId: string; secret?: string }): Promise<JsonResponse> {
  const form: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier };
  if (auth.secret === undefined) form.client_id = auth.clientId;
  return postForm(`${base}/connect/token`, form, auth.secret === undefined ? {} : { authorization: basic(auth.clientId, auth.secret) });
}

export function decodeJwt(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = jwt.split('.');
  const decode = (part: string | undefined) => JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: decode(header), payload: decode(payload) };
}

export async function userinfo(base: string, accessToken: string | undefined, method: 'GET' | 'POST' = 'GET'): Promise<JsonResponse> {
  const res = await fetch(`${base}/connect/userinfo`, {
    method,
    headers: accessToken === undefined ? {} : { authorization: `Bearer ${accessToken}` },
  });
  const text = await res.text();
  const body = jsonBody(text);
  return { status: res.status, headers: res.headers, body };
}

export { Browser, readForm, type Page };
