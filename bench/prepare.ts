/**
 * What the scenarios consume, made through the real interfaces: clients, users and an API scope
 * with `idp seed`; a signed-in browser session through the sign-in pages (Browser helper); codes
 * minted with prompt-less authorize requests from that session (no argon2 per code); refresh
 * token families and access tokens from real code exchanges.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser, readForm } from '../test/helpers/browser-http.ts';
import { ROOT } from './servers.ts';

export const WEB = { clientId: 'bench-web', secret: 'bench-web-secret-0123456789abcdefghijklmnop', redirectUri: 'https://rp.bench/cb' };
export const SERVICE = { clientId: 'bench-service', secret: 'bench-service-secret-0123456789abcdefghijk', scope: 'bench.read' };
/** The user whose browser session mints codes. */
export const USER = { username: 'bench-user', password: 'bench user password 0123456789' };
/** The user of the full password sign-in scenario. */
export const SIGN_IN_USER = { username: 'bench-signin', password: 'bench sign-in password 0123456789' };
/** Code exchanges ask for an ID token and a refresh token. */
export const CODE_SCOPE = 'openid profile email offline_access';
/** One PKCE pair for every code: the server checks S256 each time all the same. */
export const PKCE_VERIFIER = 'bench-pkce-verifier-0123456789abcdefghijklmnopqrstuvwxyz';
const PKCE_CHALLENGE = createHash('sha256').update(PKCE_VERIFIER).digest('base64url');

export const SEED = {
  api_scopes: [SERVICE.scope],
  clients: [
    {
      client_id: WEB.clientId, client_secret: WEB.secret, display_name: 'Bench web app',
      grant_types: ['authorization_code', 'refresh_token'], scopes: ['openid', 'profile', 'email', 'offline_access'],
      redirect_uris: [WEB.redirectUri], access_token_lifetime: 3600, require_consent: false,
    },
    {
      client_id: SERVICE.clientId, client_secret: SERVICE.secret, display_name: 'Bench service',
      grant_types: ['client_credentials'], scopes: [SERVICE.scope], access_token_lifetime: 3600,
    },
  ],
  users: [USER, SIGN_IN_USER].map((u, i) => ({
    ...u, given_name: 'Bench', family_name: `User ${i + 1}`, name: `Bench User ${i + 1}`,
    email: `${u.username}@example.com`, email_verified: true, roles: ['viewer'],
  })),
};

export function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** Path and query of an authorization request of the web client (code flow, PKCE S256). */
export function authorizePath(): string {
  const query = new URLSearchParams({
    client_id: WEB.clientId, response_type: 'code', redirect_uri: WEB.redirectUri, scope: CODE_SCOPE,
    code_challenge: PKCE_CHALLENGE, code_challenge_method: 'S256', state: 'bench-state',
  });
  return `/connect/authorize?${query.toString()}`;
}

/** Applies SEED with `idp seed` (the administrators' command), in the environment of the servers. */
export async function seed(env: Record<string, string>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'idp-bench-seed-'));
  try {
    const file = join(dir, 'seed.json');
    writeFileSync(file, JSON.stringify(SEED));
    const child = spawn(process.execPath, [join(ROOT, 'bin/idp.js'), 'seed', file], { env, cwd: ROOT });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    if (code !== 0) throw new Error(`idp seed failed (${code}): ${output}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function codeFromLocation(location: string | undefined, status: number): string {
  const url = location ? new URL(location) : undefined;
  const code = url?.searchParams.get('code');
  if (status !== 302 || !url || `${url.origin}${url.pathname}` !== WEB.redirectUri || !code) {
    throw new Error(`expected a 302 to the client with a code, got ${status} ${location ?? ''}`);
  }
  return code;
}

/** Signs the user in through the pages (authorize -> sign-in page -> password); returns the browser. */
export async function signIn(base: string, user = USER): Promise<Browser> {
  const browser = new Browser();
  const page = await browser.follow(await browser.get(`${base}${authorizePath()}`), base);
  const form = readForm(page.body, page.url);
  const done = await browser.post(form.action, { ...form.fields, username: user.username, password: user.password });
  codeFromLocation(done.location, done.status);
  return browser;
}

/** Runs `task(i)` for i < count with `concurrency` in flight. */
async function pool<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** Codes from prompt-less authorize requests of a signed-in browser: one request each, no argon2. */
export function mintCodes(base: string, browser: Browser, count: number, concurrency = 32): Promise<string[]> {
  return pool(count, concurrency, async () => {
    const page = await browser.get(`${base}${authorizePath()}`);
    return codeFromLocation(page.location, page.status);
  });
}

export interface TokenSet {
  access_token: string;
  refresh_token: string;
  id_token: string;
}

export async function exchangeCode(base: string, code: string): Promise<TokenSet> {
  const res = await fetch(`${base}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(WEB.clientId, WEB.secret) },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: WEB.redirectUri, code_verifier: PKCE_VERIFIER }).toString(),
  });
  const body = (await res.json()) as Partial<TokenSet>;
  if (res.status !== 200 || !body.access_token || !body.refresh_token || !body.id_token) {
    throw new Error(`code exchange failed: ${res.status} ${JSON.stringify(body)}`);
  }
  return body as TokenSet;
}

/** `count` refresh token families, each from a real code exchange; returns their refresh tokens. */
export async function refreshFamilies(base: string, browser: Browser, count: number): Promise<string[]> {
  const codes = await mintCodes(base, browser, count);
  const tokens = await pool(codes.length, 16, (i) => exchangeCode(base, codes[i] as string));
  return tokens.map((t) => t.refresh_token);
}
