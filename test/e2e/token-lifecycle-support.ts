/**
 * Shared by the token lifecycle e2e suites (refresh, reuse and rate limits, introspection and
 * revocation, end session): servers started as `idp serve` processes on a PostgreSQL database of
 * their own (optionally several instances on one database and one Redis), a seed, and helpers
 * that drive the pages and the endpoints from outside the way a browser or a relying party does.
 */
import { randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import { expect } from 'vitest';
import { Browser, readForm, type Page } from '../helpers/browser-http.ts';
import { startHostForwarder } from '../helpers/host-forwarder.ts';
import { runIdp, seedWith, startServer, type RunResult, type RunningServer } from '../helpers/process.ts';
import { REDIS_URL, createTestDatabase, type TestDatabase } from '../helpers/services.ts';
import { basic, jsonBody, pkce } from '../helpers/oauth.ts';

export { basic, pkce };

export const IDP_SECRET = 'e'.repeat(64);

export const WEB_SECRET = 'web-lifecycle-secret-0123456789abcdefghij';
export const OTHER_SECRET = 'other-lifecycle-secret-0123456789abcdefgh';
export const SERVICE_SECRET = 'service-lifecycle-secret-0123456789abcdef';
export const DISABLE_SECRET = 'disable-lifecycle-secret-0123456789abcdef';

export const WEB_REDIRECT = 'https://rp.test/cb';
export const WEB_LOGOUT = 'https://rp.test/bye';
export const WEB_ORIGIN = 'https://web.example';
export const SPA_REDIRECT = 'https://spa.test/cb';
export const SPA_ORIGIN = 'https://spa.example';
export const OTHER_REDIRECT = 'https://other.test/cb';
export const OTHER_ORIGIN = 'https://other.example';
export const DISABLE_REDIRECT = 'https://disabled.test/cb';
export const DISABLE_LOGOUT = 'https://disabled.test/bye';
/** Registered on no client. */
export const STRANGER_ORIGIN = 'https://evil.example';

export interface User {
  username: string;
  password: string;
}

export const ALICE: User = { username: 'alice', password: 'correct horse battery staple' };
export const BOB: User = { username: 'bob', password: 'his own long password 42' };

/** A user account seeded with a name and an e-mail address. */
function user(u: User, given: string, family: string) {
  return { ...u, given_name: given, family_name: family, name: `${given} ${family}`, email: `${u.username}@example.com`, email_verified: true };
}

export function seedFor(users: User[] = [ALICE, BOB]) {
  return {
    api_scopes: ['orders.read', 'orders.write'],
    clients: [
      {
        client_id: 'web', client_secret: WEB_SECRET, display_name: 'Web shop',
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'email', 'offline_access', 'orders.read'],
        redirect_uris: [WEB_REDIRECT], post_logout_redirect_uris: [WEB_LOGOUT], cors_origins: [WEB_ORIGIN],
        access_token_lifetime: 900, require_consent: false,
      },
      {
        client_id: 'spa', display_name: 'Single page app',
        grant_types: ['authorization_code', 'refresh_token'],
        scopes: ['openid', 'profile', 'offline_access'],
        redirect_uris: [SPA_REDIRECT], cors_origins: [SPA_ORIGIN], require_consent: false,
      },
      {
        client_id: 'other', client_secret: OTHER_SECRET, display_name: 'Other app',
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
        scopes: ['openid', 'profile', 'offline_access', 'orders.read'],
        redirect_uris: [OTHER_REDIRECT], cors_origins: [OTHER_ORIGIN], require_consent: false,
      },
      {
        client_id: 'service', client_secret: SERVICE_SECRET, display_name: 'Order service',
        grant_types: ['client_credentials'], scopes: ['orders.read', 'orders.write'],
      },
      {
        client_id: 'to-disable', client_secret: DISABLE_SECRET, display_name: 'Soon disabled',
        grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid', 'offline_access'],
        redirect_uris: [DISABLE_REDIRECT], post_logout_redirect_uris: [DISABLE_LOGOUT], require_consent: false,
      },
    ],
    users: users.map((u) => user(u, u.username[0]?.toUpperCase() + u.username.slice(1), 'Tester')),
  };
}

export interface Cluster {
  db: TestDatabase;
  /** Instances on one database (and one Redis when asked); all answer for `base`'s issuer. */
  servers: RunningServer[];
  /** The public base URL (that of the first instance) and the issuer. */
  base: string;
  issuer: string;
  env: Record<string, string>;
  /** `idp ARGS...` against the cluster's database. */
  idp(args: string[]): Promise<RunResult>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  instances?: number;
  redis?: boolean;
  /** Extra environment for every instance (IDP_REFRESH_TOKEN_REUSE_GRACE, IDP_TOKEN_RATE_LIMIT, ...). */
  env?: Record<string, string>;
  seed?: object;
}

/**
 * A fresh database, seeded, and `instances` servers on it. Every instance gets the same
 * IDP_BASE_URL (the first one's address) and IDP_SECRET, as behind a load balancer.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const db = await createTestDatabase();
  const env: Record<string, string> = {
    DATABASE_URL: db.url, IDP_SECRET, LOG_LEVEL: 'info',
    ...(options.redis ? { REDIS_URL } : {}),
    ...options.env,
  };
  const servers: RunningServer[] = [];
  try {
    const first = await startServer(env);
    servers.push(first);
    env.IDP_BASE_URL = first.url;
    await seedWith(options.seed ?? seedFor(), env);
    // Further instances are reached under the first one's host, as through a load balancer.
    for (let i = 1; i < (options.instances ?? 1); i++) {
      const server = await startServer(env);
      const forwarder = await startHostForwarder(server.port, new URL(first.url).host);
      servers.push({ ...server, url: forwarder.url, stop: async () => (await forwarder.close(), server.stop()) });
    }
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    await db.drop();
    throw error;
  }
  const base = servers[0]?.url ?? '';
  return {
    db,
    servers,
    base,
    issuer: `${base}/`,
    env,
    idp: (args) => runIdp(args, env),
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
      await db.drop();
    },
  };
}

/** Runs `idp ARGS...` and fails the test when it does not succeed. */
export async function idpOk(cluster: Cluster, args: string[]): Promise<void> {
  const result = await cluster.idp(args);
  expect(result.code, `idp ${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(0);
}

/** CONTRACT section 4: a change takes effect on every instance within one second. */
export const propagation = () => new Promise((resolve) => setTimeout(resolve, 1200));


export function isSignInPage(page: Page): boolean {
  return page.status === 200 && /<form[^>]*action="[^"]*\/sign-in"/.test(page.body) && page.body.includes('name="password"');
}

/**
 * Signs `user` in through the pages of the browser (when the browser has no session yet) and
 * returns the authorization code delivered to `redirectUri`.
 */
export async function authorize(
  browser: Browser, base: string, clientId: string, redirectUri: string, who: User, scope: string,
): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  const state = randomBytes(8).toString('hex');
  const query = new URLSearchParams({
    client_id: clientId, response_type: 'code', redirect_uri: redirectUri, scope,
    code_challenge: challenge, code_challenge_method: 'S256', state,
  });
  let page = await browser.follow(await browser.get(`${base}/connect/authorize?${query.toString()}`), base);
  if (isSignInPage(page)) {
    const form = readForm(page.body, page.url);
    page = await browser.follow(await browser.post(form.action, { ...form.fields, username: who.username, password: who.password }), base);
  }
  expect(page.status, page.body.slice(0, 500)).toBe(302);
  expect(page.location?.startsWith(`${redirectUri}?`), page.location).toBe(true);
  const params = new URL(page.location ?? '').searchParams;
  expect(params.get('error'), params.get('error_description') ?? '').toBeNull();
  expect(params.get('state')).toBe(state);
  return { code: params.get('code') ?? '', verifier };
}

export interface ClientCredentials {
  clientId: string;
  /** Absent for public clients. */
  secret?: string;
}

export const WEB: ClientCredentials = { clientId: 'web', secret: WEB_SECRET };
export const SPA: ClientCredentials = { clientId: 'spa' };
export const OTHER: ClientCredentials = { clientId: 'other', secret: OTHER_SECRET };
export const SERVICE: ClientCredentials = { clientId: 'service', secret: SERVICE_SECRET };
export const TO_DISABLE: ClientCredentials = { clientId: 'to-disable', secret: DISABLE_SECRET };

export const REDIRECTS: Record<string, string> = { web: WEB_REDIRECT, spa: SPA_REDIRECT, other: OTHER_REDIRECT, 'to-disable': DISABLE_REDIRECT };


export interface HttpResponse {
  status: number;
  headers: Headers;
  /** The body exactly as received. */
  text: string;
  /** The body parsed as JSON, or `{ unparsed: text }`. */
  body: Record<string, unknown>;
}

export async function request(url: string, init: RequestInit): Promise<HttpResponse> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  const body = jsonBody(text);
  return { status: res.status, headers: res.headers, text, body };
}

export function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

/** A POST to `path` as `who`: Basic for confidential clients, client_id in the body for public ones. */
export function clientPost(base: string, path: string, who: ClientCredentials, form: Record<string, string>, headers: Record<string, string> = {}): Promise<HttpResponse> {
  if (who.secret === undefined) return postForm(`${base}${path}`, { client_id: who.clientId, ...form }, headers);
  return postForm(`${base}${path}`, form, { authorization: basic(who.clientId, who.secret), ...headers });
}

export const token = (base: string, who: ClientCredentials, form: Record<string, string>, headers: Record<string, string> = {}) =>
  clientPost(base, '/connect/token', who, form, headers);
export const refresh = (base: string, who: ClientCredentials, refreshToken: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  token(base, who, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }, headers);
export const introspect = (base: string, who: ClientCredentials, tokenValue: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  clientPost(base, '/connect/introspect', who, { token: tokenValue, ...extra }, headers);
export const revoke = (base: string, who: ClientCredentials, tokenValue: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  clientPost(base, '/connect/revoke', who, { token: tokenValue, ...extra }, headers);

export function userinfo(base: string, accessToken: string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return request(`${base}/connect/userinfo`, { headers: { authorization: `Bearer ${accessToken}`, ...headers } });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  id_token?: string;
  scope: string;
  expires_in: number;
  token_type: string;
}

/** Gets a code for `who` at `client` in `browser` (signing in when it has no session) and redeems it. */
export async function tokensWith(browser: Browser, base: string, who: User, client: ClientCredentials, scope = 'openid profile offline_access'): Promise<Tokens> {
  const redirectUri = REDIRECTS[client.clientId] ?? '';
  const { code, verifier } = await authorize(browser, base, client.clientId, redirectUri, who, scope);
  const res = await token(base, client, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
  expect(res.status, res.text).toBe(200);
  return res.body as unknown as Tokens;
}

/** Browsers that are signed in already, per base URL and user: a code then needs no page. */
const browsers = new Map<string, Browser>();

/** Signs `who` in (once per cluster), gets a code for `who` at `clientId`, redeems it. */
export function signInTokens(cluster: { base: string }, who: User, client: ClientCredentials, scope = 'openid profile offline_access'): Promise<Tokens> {
  const key = `${cluster.base} ${who.username}`;
  const browser = browsers.get(key) ?? new Browser();
  browsers.set(key, browser);
  return tokensWith(browser, cluster.base, who, client, scope);
}

/** A token endpoint (or introspection, revocation) error: status, code, a description, JSON, no-store. */
export function expectOAuthError(res: HttpResponse, status: number, code: string): void {
  expect(res.body.error, `${res.status} ${res.text}`).toBe(code);
  expect(res.status, res.text).toBe(status);
  expect(typeof res.body.error_description).toBe('string');
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('cache-control')).toMatch(/no-store/);
  expect(res.body).not.toHaveProperty('access_token');
  if (status === 401) expect(res.headers.get('www-authenticate'), 'a 401 names its scheme').toMatch(/^Basic /);
}

/** Userinfo refuses the token: 401 with a Bearer challenge. */
export async function expectUserinfoRefused(base: string, accessToken: string): Promise<void> {
  const res = await userinfo(base, accessToken);
  expect(res.status, res.text).toBe(401);
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
}

export async function expectUserinfoAccepted(base: string, accessToken: string): Promise<void> {
  const res = await userinfo(base, accessToken);
  expect(res.status, res.text).toBe(200);
  expect(typeof res.body.sub).toBe('string');
}

/** Introspection of `tokenValue` by its own client says exactly {"active":false}. */
export async function expectInactive(base: string, who: ClientCredentials, tokenValue: string, hint?: string): Promise<void> {
  const res = await introspect(base, who, tokenValue, hint ? { token_type_hint: hint } : {});
  expect(res.status, res.text).toBe(200);
  expect(res.body).toStrictEqual({ active: false });
}

export async function expectActive(base: string, who: ClientCredentials, tokenValue: string): Promise<Record<string, unknown>> {
  const res = await introspect(base, who, tokenValue);
  expect(res.status, res.text).toBe(200);
  expect(res.body.active, res.text).toBe(true);
  return res.body;
}

export function decodeJwt(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const [header, payload] = jwt.split('.');
  const decode = (part: string | undefined) => JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
  return { header: decode(header), payload: decode(payload) };
}

/** openid-client, discovering the cluster's issuer over http. */
export function relyingParty(cluster: { issuer: string }, who: ClientCredentials): Promise<client.Configuration> {
  const auth = who.secret === undefined ? client.None() : client.ClientSecretBasic(who.secret);
  return client.discovery(new URL(cluster.issuer), who.clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export { Browser, readForm, type Page };
