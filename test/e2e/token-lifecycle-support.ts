/**
 * Shared by the token lifecycle e2e suites (refresh, reuse and rate limits, introspection and
 * revocation, end session): servers started as `idp serve` processes on a PostgreSQL database of
 * their own (optionally several instances on one database and one Redis), a seed, and the
 * clients' credentials and expectations; the relying party itself is test/helpers/relying-party.ts.
 */
import * as client from 'openid-client';
import { expect } from 'vitest';
import { startHostForwarder } from '../helpers/host-forwarder.ts';
import { runIdp, seedWith, startServer, type RunResult, type RunningServer } from '../helpers/process.ts';
import { REDIS_URL, createMigratedTestDatabase, type TestDatabase } from '../helpers/services.ts';
import { basic, pkce } from '../helpers/oauth.ts';
import {
  Browser, authorize, introspect, sleep, token, userinfo, type ClientCredentials, type HttpResponse, type User,
} from '../helpers/relying-party.ts';

export { basic, pkce };
export {
  Browser, authorize, clientPost, decodeJwt, introspect, isSignInPage, postForm, readForm, refresh, request, revoke, sleep, token, userinfo,
  type ClientCredentials, type HttpResponse, type Page, type User,
} from '../helpers/relying-party.ts';

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
  const db = await createMigratedTestDatabase();
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

/** README, Editing clients with SQL: a change takes effect on every instance within one second. */
export const propagation = () => sleep(1200);


export const WEB: ClientCredentials = { clientId: 'web', secret: WEB_SECRET };
export const SPA: ClientCredentials = { clientId: 'spa' };
export const OTHER: ClientCredentials = { clientId: 'other', secret: OTHER_SECRET };
export const SERVICE: ClientCredentials = { clientId: 'service', secret: SERVICE_SECRET };
export const TO_DISABLE: ClientCredentials = { clientId: 'to-disable', secret: DISABLE_SECRET };

export const REDIRECTS: Record<string, string> = { web: WEB_REDIRECT, spa: SPA_REDIRECT, other: OTHER_REDIRECT, 'to-disable': DISABLE_REDIRECT };


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

/** openid-client, discovering the cluster's issuer over http. */
export function relyingParty(cluster: { issuer: string }, who: ClientCredentials): Promise<client.Configuration> {
  const auth = who.secret === undefined ? client.None() : client.ClientSecretBasic(who.secret);
  return client.discovery(new URL(cluster.issuer), who.clientId, undefined, auth, { execute: [client.allowInsecureRequests] });
}

