/**
 * A real browser for the sign-in pages: Debian's Chromium driven by playwright-core, a tiny
 * relying party that records what its callback receives, and the authorization request.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { ROOT, seedWith, startServer, tempDir, type RunningServer } from './process.ts';
import { HANG_LIMIT_MS } from './waits.ts';

const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = join(ROOT, 'test-artifacts', 'screenshots');

/** Whether Chromium is here; without it a suite is skipped with one line, or fails under CI. */
export function chromiumAvailable(suite: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.IDP_TEST_REQUIRE_SERVICES === '1') {
    throw new Error(`Chromium is required (IDP_TEST_REQUIRE_SERVICES=1) but ${CHROMIUM} is missing: apt-get install chromium`);
  }
  console.warn(`${CHROMIUM} not found: ${suite} is skipped (apt-get install chromium)`);
  return false;
}

/**
 * Headless, and without the background networking that a closed network refuses. Playwright
 * fails at once when Chromium exits; its own 30 s guess would fail a launch that is only slow.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    timeout: HANG_LIMIT_MS,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The relying party: a tiny HTTP server that records every query its callback receives. */
export interface RelyingParty {
  port: number;
  redirectUri: string;
  received: URLSearchParams[];
  close(): Promise<void>;
}

export function startRelyingParty(): Promise<RelyingParty> {
  const received: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/callback') received.push(url.searchParams);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><title>Callback</title><h1>Back at the application</h1></html>');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        port,
        redirectUri: `http://127.0.0.1:${port}/callback`,
        received,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}

export interface AuthorizeRequest {
  url: string;
  state: string;
  verifier: string;
}

/** An authorization request with PKCE S256, a state and a nonce. */
export function authorizeRequest(server: RunningServer, rp: RelyingParty, clientId: string, scope: string): AuthorizeRequest {
  const verifier = randomBytes(32).toString('base64url');
  const state = randomBytes(16).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: rp.redirectUri,
    scope,
    state,
    nonce: randomBytes(16).toString('base64url'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  return { url: `${server.url}/connect/authorize?${query}`, state, verifier };
}

/** Collects what the browser says about refused content (CSP) while a page is used. */
export function watchConsole(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return problems;
}

/** What a browser suite runs against, once its `beforeAll` has run. */
export interface BrowserDeployment {
  readonly rp: RelyingParty;
  readonly server: RunningServer;
  /** A page in a browser context of its own (its own cookies), closed after the suite. */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
}

/** The one client a browser suite signs in to: public, the code flow with PKCE, back to the relying party. */
export interface BrowserClient {
  client_id: string;
  display_name: string;
  scopes: string[];
  require_consent: boolean;
  /** `authorization_code` unless given (add `refresh_token` for a suite that refreshes). */
  grant_types?: string[];
}

/** The seed of a browser suite: its client, redirecting to `rp`, and its one user. */
function browserSeed(rp: RelyingParty, client: BrowserClient, user: object): object {
  return {
    api_scopes: [],
    clients: [{
      grant_types: ['authorization_code'], ...client, enabled: true,
      redirect_uris: [rp.redirectUri], post_logout_redirect_uris: [], cors_origins: [],
    }],
    users: [user],
  };
}

/**
 * For the suite it is called in: a relying party, the service on an embedded database seeded
 * with `client` and `user` before it starts (the embedded database belongs to one process at a
 * time), and Chromium; all stopped and removed after the suite.
 */
export function useBrowserDeployment(options: {
  dataDirPrefix: string;
  secret: string;
  client: BrowserClient;
  /** A user of the seed file (the README's Command line section). */
  user: object;
  /** More of the service's environment (IDP_BRAND_*, say). */
  env?: Record<string, string>;
}): BrowserDeployment {
  const data = tempDir(options.dataDirPrefix);
  const env = { ...options.env, IDP_DATA_DIR: data.path, IDP_SECRET: options.secret };
  let rp: RelyingParty | undefined;
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    rp = await startRelyingParty();
    await seedWith(browserSeed(rp, options.client, options.user), env);
    server = await startServer(env);
    browser = await launchChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
  });
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.stop();
    await rp?.close();
    data.remove();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} did not start`);
    return value;
  };
  return {
    get rp() {
      return started(rp, 'the relying party');
    },
    get server() {
      return started(server, 'the server');
    },
    async newPage(viewport = { width: 1280, height: 800 }) {
      const context = await started(browser, 'Chromium').newContext({ viewport, colorScheme: 'light', locale: 'en-US' });
      // A page waits for what it waits for (an element, a URL), not for Playwright's 30 s guess.
      context.setDefaultTimeout(HANG_LIMIT_MS);
      contexts.push(context);
      return context.newPage();
    },
  };
}
