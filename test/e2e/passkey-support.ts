/**
 * What the passkey suites share: Chromium's virtual authenticator (DevTools Protocol `WebAuthn`
 * domain), the sign-in pages driven by their labels, and the ID token of the code that comes
 * back. The service runs at http://localhost:PORT: a relying party id must be a domain name
 * (browsers refuse an IP address), and localhost is a secure context without TLS.
 */
import type { Browser, CDPSession, Page } from 'playwright-core';
import { expect } from 'vitest';
import type { RelyingParty } from '../helpers/chromium.ts';
import { HANG_LIMIT_MS } from '../helpers/waits.ts';
import { decodeJwt, postForm } from '../helpers/relying-party.ts';

export const PASSWORD = 'she signs in with a passkey 7';

/** A virtual authenticator on the page: a platform authenticator with a resident key and user verification. */
export interface VirtualAuthenticator {
  cdp: CDPSession;
  id: string;
  setUserVerified(verified: boolean): Promise<void>;
  credentials(): Promise<Array<Record<string, unknown> & { credentialId: string; signCount: number }>>;
}

export async function addVirtualAuthenticator(page: Page): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId: id } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return {
    cdp,
    id,
    setUserVerified: async (isUserVerified) => void (await cdp.send('WebAuthn.setUserVerified', { authenticatorId: id, isUserVerified })),
    credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId: id })).credentials as never,
  };
}

/** Opens `url` (an authorization request) and signs in with the password. */
export async function signInWithPassword(page: Page, url: string, username: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Username', { exact: true }).fill(username);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** Clicks a passkey button and waits for the server's answer to the form's post; returns what was posted, and where. */
export async function usePasskey(page: Page, button: 'Use a passkey' | 'Set up a passkey'): Promise<{ body: string; url: string }> {
  const posted = page.waitForRequest((r) => r.method() === 'POST' && /\/passkey(-enrol)?$/.test(new URL(r.url()).pathname));
  await page.getByRole('button', { name: button, exact: true }).click();
  const request = await posted;
  await request.response();
  return { body: request.postData() ?? '', url: request.url() };
}

export const atCallback = (rp: RelyingParty) => (url: URL) => url.origin === `http://127.0.0.1:${rp.port}` && url.pathname === '/callback';

/** Redeems the code of the callback URL (public client, PKCE) and returns the ID token's claims. */
export async function idTokenClaims(base: string, clientId: string, callback: string, verifier: string, redirectUri: string): Promise<Record<string, unknown>> {
  const res = await postForm(`${base}/connect/token`, {
    grant_type: 'authorization_code', client_id: clientId, code: new URL(callback).searchParams.get('code') ?? '', redirect_uri: redirectUri, code_verifier: verifier,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return decodeJwt(res.body.id_token ?? '').payload;
}

/** The audit lines of `event` in a server's output, parsed. */
export function auditLines(output: string, event: string): Array<Record<string, unknown>> {
  return output.split('\n').filter((line) => line.includes(`"event":"${event}"`)).map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A page at 1280 px with a virtual authenticator; `policy()` is the Content-Security-Policy of the page shown now (read from its response: fetching it again would make a new challenge). */
export async function passkeyPage(browser: Browser): Promise<{ page: Page; authenticator: VirtualAuthenticator; policy: () => string }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', locale: 'en-US' });
  // A page waits for what it waits for (an element, a URL), not for Playwright's 30 s guess.
  context.setDefaultTimeout(HANG_LIMIT_MS);
  const page = await context.newPage();
  const authenticator = await addVirtualAuthenticator(page);
  let shown = '';
  page.on('response', (response) => {
    if (response.request().resourceType() === 'document' && response.status() === 200) shown = response.headers()['content-security-policy'] ?? '';
  });
  return { page, authenticator, policy: () => shown };
}
