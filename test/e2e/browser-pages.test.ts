/**
 * Every page, in a real browser, passes axe-core's WCAG 2.1 A and AA rules at a desktop width and
 * at a phone's 390 px: sign-in, failed sign-in, enrolment, the recovery codes shown after it,
 * password change (before and after a refused try), consent, second factor and recovery code
 * (before and after a wrong code), sign-out confirmation, sign-out cancelled, signed-out and
 * the error page. One deployment, branded (IDP_BRAND_NAME, an SVG IDP_BRAND_LOGO and a light
 * IDP_BRAND_COLOR), walked through once; on the way, what each page tells people is checked: the
 * brand, the password rules before the first try, the fields in error, the QR code's text
 * alternative, the account named at sign-out, Cancel, the way back to the application and the
 * request id on the error page. Screenshots of each page at each width go to
 * test-artifacts/screenshots/branded-*.png for people to look at.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../helpers/axe.ts';
import { authorizeRequest, chromiumAvailable, useBrowserDeployment, watchConsole, type RelyingParty } from '../helpers/chromium.ts';
import { tempDir, type RunningServer } from '../helpers/process.ts';
import { awayFromStepEnd, totp } from '../helpers/totp.ts';

const chromiumReady = chromiumAvailable('the accessibility suite');

const SECRET = 'd'.repeat(64);
const CLIENT_ID = 'pages-app';
const CLIENT_NAME = 'Pages App';
const USERNAME = 'pat';
const PASSWORD = 'they sign in for the first time 7';
const NEW_PASSWORD = 'lighthouse keeper 42 drinks tea';
const BRAND_NAME = 'Acme & Co';
/** A light colour: the button text must turn black to keep AA contrast. */
const BRAND_COLOR = '#ffd400';

const logoDir = tempDir('idp-brand-');
const LOGO = join(logoDir.path, 'logo.svg');
writeFileSync(LOGO, '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40" width="120" height="40"><rect width="40" height="40" rx="8" fill="#ffd400"/><rect x="48" y="14" width="70" height="12" rx="3" fill="#333"/></svg>');

/** No axe violation, the title is the heading followed by the brand, the brand is on the page. */
async function expectGoodPage(page: Page, name: string): Promise<void> {
  expect(await axeViolations(page, name, 'branded')).toEqual([]);
  const heading = (await page.getByRole('heading', { level: 1 }).innerText()).trim();
  expect(await page.title(), name).toBe(`${heading} – ${BRAND_NAME}`);
  await expect(page.locator('.brand-name').innerText(), name).resolves.toBe(BRAND_NAME);
  // The logo is the service's own file, drawn.
  const logo = page.locator('img.brand-logo');
  expect(new URL((await logo.getAttribute('src')) ?? '', page.url()).pathname, name).toBe('/assets/brand-logo');
  expect(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), name).toBe(true);
}

/** For each group of four characters of the key as shown, the number of lines it is drawn on. */
function linesPerKeyGroup(page: Page): Promise<number[]> {
  return page.locator('.secret code').evaluate((code) => {
    const counts: number[] = [];
    const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of (node.textContent ?? '').matchAll(/[A-Z2-7]{1,4}/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        counts.push(new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size);
      }
    }
    return counts;
  });
}

describe.runIf(chromiumReady)('every page, accessible and branded', () => {
  const deployment = useBrowserDeployment({
    dataDirPrefix: 'idp-browser-pages-',
    secret: SECRET,
    env: { IDP_BRAND_NAME: BRAND_NAME, IDP_BRAND_LOGO: LOGO, IDP_BRAND_COLOR: BRAND_COLOR },
    client: { client_id: CLIENT_ID, display_name: CLIENT_NAME, scopes: ['openid', 'profile', 'email'], require_consent: true },
    user: {
      username: USERNAME, password: PASSWORD, name: 'Pat Example', email: 'pat@example.com', email_verified: true,
      must_enrol_mfa: true, must_change_password: true,
    },
  });
  let rp: RelyingParty;
  let server: RunningServer;
  /** One browser for the first walk: sign-in to consent, then sign-out. */
  let page: Page;
  let problems: string[];
  let enrolled = '';
  beforeAll(async () => {
    ({ rp, server } = deployment);
    page = await deployment.newPage();
    problems = watchConsole(page);
  });
  afterAll(() => logoDir.remove());

  it('serves the logo itself, an SVG under a policy that runs no script, and the brand colour', async () => {
    const logo = await fetch(`${server.url}/assets/brand-logo`);
    expect(logo.status).toBe(200);
    expect(logo.headers.get('content-type')).toBe('image/svg+xml');
    expect(logo.headers.get('cache-control')).toBe('public, max-age=3600');
    const policy = logo.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain('sandbox');
    expect(policy).not.toMatch(/script-src/);
    expect(Buffer.from(await logo.arrayBuffer()).equals(readFileSync(LOGO))).toBe(true);
    const css = await (await fetch(`${server.url}/assets/idp.css`)).text();
    expect(css).toContain(`--primary: ${BRAND_COLOR};`);
    expect(css).toContain('--primary-text: #000000;');
  });

  it('sign-in, then a failed sign-in with both fields pointing at the message', async () => {
    await page.goto(authorizeRequest(server, rp, CLIENT_ID, 'openid profile email').url);
    const signIn = page.getByRole('button', { name: 'Sign in', exact: true });
    await signIn.waitFor();
    // The brand colour paints the button, with black text on the light yellow.
    expect(await signIn.evaluate((b) => [getComputedStyle(b).backgroundColor, getComputedStyle(b).color])).toEqual(['rgb(255, 212, 0)', 'rgb(0, 0, 0)']);
    // The focus ring is the brand colour too, darkened to 3:1 against the white card (#a68a00:
    // 3.4:1); the glow behind the card is the brand colour faded toward white (80%): no default blue left.
    const username = page.getByLabel('Username', { exact: true });
    await username.focus();
    // Soft: the walk through the pages goes on either way.
    expect.soft(await username.evaluate((i) => getComputedStyle(i).borderColor)).toBe('rgb(166, 138, 0)');
    expect.soft(await page.locator('body').evaluate((b) => getComputedStyle(b).backgroundImage)).toContain('rgb(255, 246, 204)');
    await expectGoodPage(page, 'sign-in');

    await page.getByLabel('Username', { exact: true }).fill(USERNAME);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await signIn.click();
    await page.getByRole('alert').waitFor();
    for (const label of ['Username', 'Password']) {
      const field = page.getByLabel(label, { exact: true });
      await expect(field.getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(field.getAttribute('aria-describedby')).resolves.toBe('form-error');
    }
    await expectGoodPage(page, 'failed sign-in');
  });

  it('enrolment: the QR code has a text alternative, the same as a link, the account named, the key whole per group', async () => {
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const qr = page.getByRole('img', { name: /QR code/ });
    await qr.waitFor();
    await expectGoodPage(page, 'enrolment');
    const text = await page.locator('body').innerText();
    enrolled = (/\b((?:[A-Z2-7]{4} )+[A-Z2-7]{1,4})\b/.exec(text)?.[1] ?? '').replace(/\s+/g, '');
    expect(enrolled.length).toBeGreaterThanOrEqual(26);
    // A phone cannot scan its own screen: the QR code's URI is a link as well. (Soft: the walk
    // through the pages goes on either way.)
    // The app lists the account under the name people know the service by (IDP_BRAND_NAME).
    const issuer = BRAND_NAME;
    const links = await page.getByRole('link', { name: 'Open in authenticator app' }).evaluateAll((found) => found.map((a) => a.getAttribute('href') ?? ''));
    expect.soft(links).toHaveLength(1);
    const link = new URL(links[0] ?? 'otpauth://none');
    expect.soft([link.protocol, link.host, decodeURIComponent(link.pathname)]).toEqual(['otpauth:', 'totp', `/${issuer}:${USERNAME}`]);
    expect.soft(link.searchParams.get('secret')).toBe(enrolled);
    expect.soft(text).toContain(`Account ${USERNAME}, listed in the app under ${issuer}.`);
    // At a phone's width the key wraps between its groups of four, never inside one.
    await page.setViewportSize({ width: 390, height: 844 });
    expect.soft(await linesPerKeyGroup(page)).toEqual(Array.from({ length: Math.ceil(enrolled.length / 4) }, () => 1));
    await page.setViewportSize({ width: 1280, height: 800 });
    await awayFromStepEnd();
    await page.getByLabel('Authentication code', { exact: true }).fill(await totp(enrolled, Math.floor(Date.now() / 1000)));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
  });

  it('recovery codes: ten, shown once, each on one line, then Continue', async () => {
    const list = page.getByRole('list', { name: 'Recovery codes' });
    await list.waitFor();
    const codes = (await list.getByRole('listitem').allInnerTexts()).map((c) => c.trim());
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{2}$/);
    await expectGoodPage(page, 'recovery codes');
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
  });

  it('password change: why, and the rules before the first try; then the field in error', async () => {
    const newPassword = page.getByLabel('New password', { exact: true });
    await newPassword.waitFor();
    await expect(page.getByRole('alert').count()).resolves.toBe(0);
    const body = await page.locator('body').innerText();
    expect(body).toMatch(/administrator requires a new password/);
    expect(body).toMatch(/at least 12 characters/);
    await expect(newPassword.getAttribute('aria-describedby')).resolves.toBe('password-rules');
    await expectGoodPage(page, 'password change');

    await newPassword.fill(NEW_PASSWORD);
    await page.getByLabel('Confirm password', { exact: true }).fill(`${NEW_PASSWORD}!`);
    await page.getByRole('button', { name: 'Change password', exact: true }).click();
    await page.getByRole('alert').waitFor();
    const confirm = page.getByLabel('Confirm password', { exact: true });
    await expect(confirm.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(confirm.getAttribute('aria-describedby')).resolves.toBe('form-error');
    await expect(page.getByLabel('New password', { exact: true }).getAttribute('aria-invalid')).resolves.toBeNull();
    await expectGoodPage(page, 'refused password change');

    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await confirm.fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password', exact: true }).click();
  });

  it('consent', async () => {
    const allow = page.getByRole('button', { name: 'Allow', exact: true });
    await allow.waitFor();
    await expectGoodPage(page, 'consent');
    await allow.click();
    await page.waitForURL((url) => url.origin === `http://127.0.0.1:${rp.port}` && url.pathname === '/callback');
  });

  it('sign-out confirmation names the account; Cancel keeps the session and leads back', async () => {
    await page.goto(`${server.url}/connect/logout?client_id=${CLIENT_ID}`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
    expect(await page.locator('body').innerText()).toContain('You are signed in as Pat Example (pat)');
    await expectGoodPage(page, 'sign-out confirmation');

    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByRole('heading', { name: 'You are still signed in' }).waitFor();
    const back = page.getByRole('link', { name: `Return to ${CLIENT_NAME}` });
    expect(await back.getAttribute('href')).toBe(`http://127.0.0.1:${rp.port}/`);
    await expectGoodPage(page, 'sign-out cancelled');
    // Still signed in: a new authorization request goes straight to the client.
    await page.goto(authorizeRequest(server, rp, CLIENT_ID, 'openid profile email').url);
    await page.waitForURL((url) => url.origin === `http://127.0.0.1:${rp.port}` && url.pathname === '/callback');
  });

  it('sign-out asked with no application named: Cancel leads back to the one this browser signed in to', async () => {
    await page.goto(`${server.url}/connect/logout`);
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByRole('heading', { name: 'You are still signed in' }).waitFor();
    expect(await page.locator('body').innerText()).not.toContain('You can now close this window');
    const back = page.getByRole('link', { name: `Return to ${CLIENT_NAME}` });
    expect(await back.count()).toBe(1);
    expect(await back.getAttribute('href')).toBe(`http://127.0.0.1:${rp.port}/`);
  });

  it('signed out, with a link back to the application', async () => {
    await page.goto(`${server.url}/connect/logout?client_id=${CLIENT_ID}`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'You have signed out' }).waitFor();
    expect(await page.getByRole('link', { name: `Return to ${CLIENT_NAME}` }).getAttribute('href')).toBe(`http://127.0.0.1:${rp.port}/`);
    await expectGoodPage(page, 'signed out');
  });

  it('error page: plain words, the code and the request id to quote, no link to an unchecked address', async () => {
    const response = await page.goto(`${server.url}/connect/authorize?client_id=nobody&response_type=code&scope=openid&redirect_uri=${encodeURIComponent('https://attacker.example/cb')}`);
    expect(response?.status()).toBe(400);
    const requestId = response?.headers()['x-request-id'] ?? '';
    expect(requestId).not.toBe('');
    await expect(page.locator('.request-id').innerText()).resolves.toBe(requestId);
    // People read plain words first; the technical description stays below, with the code, for support.
    expect(await page.locator('p.lead').innerText()).toMatch(/^The application that sent you here is not set up to sign in with this service\./);
    const text = await page.locator('body').innerText();
    expect(text.indexOf('The client is unknown.')).toBeGreaterThan(text.indexOf('Error code: invalid_request'));
    expect(await page.locator('a[href*="attacker"]').count()).toBe(0);
    await expectGoodPage(page, 'error');
    expect(problems).toEqual([]);
  });

  it('error page of a sign-out request that cannot be checked: the way to sign out here', async () => {
    const response = await page.goto(`${server.url}/connect/logout?client_id=nobody`);
    expect(response?.status()).toBe(400);
    expect(await page.locator('body').innerText()).toContain('Error code: invalid_request');
    const signOut = page.getByRole('link', { name: 'Sign out', exact: true });
    expect(await signOut.count()).toBe(1);
    expect(new URL((await signOut.getAttribute('href')) ?? '', page.url()).href).toBe(`${server.url}/connect/logout`);
    await expectGoodPage(page, 'sign-out error');
  });

  it('error page of a sign-in that is over: the sign-in step\'s own words lead, the code stays', async () => {
    const response = await page.goto(`${server.url}/interaction/no-such-sign-in`);
    expect(response?.status()).toBe(400);
    await page.getByRole('heading', { name: "This sign-in can't continue" }).waitFor();
    expect(await page.locator('p.lead').innerText()).toMatch(/Start again from the application\.$/);
    expect(await page.locator('body').innerText()).toContain('Error code: invalid_request');
    await expectGoodPage(page, 'sign-in over');
  });

  it('a browser asking for an unknown path gets the error page; a program gets JSON', async () => {
    const response = await page.goto(`${server.url}/no/such/page`);
    expect(response?.status()).toBe(404);
    expect(response?.headers()['content-type']).toMatch(/^text\/html/);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    expect(await page.locator('body').innerText()).toContain('Error code: not_found');
    await expectGoodPage(page, 'not found');
    const program = await fetch(`${server.url}/no/such/page`);
    expect(program.status).toBe(404);
    expect(await program.json()).toEqual({ error: 'not_found', error_description: 'No such endpoint.' });
  });

  it('second factor, before and after a wrong code', async () => {
    const second = await deployment.newPage();
    const secondProblems = watchConsole(second);
    await second.goto(authorizeRequest(server, rp, CLIENT_ID, 'openid').url);
    await second.getByLabel('Username', { exact: true }).fill(USERNAME);
    await second.getByLabel('Password', { exact: true }).fill(NEW_PASSWORD);
    await second.getByRole('button', { name: 'Sign in', exact: true }).click();
    const field = second.getByLabel('Authentication code', { exact: true });
    await field.waitFor();
    await expectGoodPage(second, 'second factor');
    const now = Math.floor(Date.now() / 1000);
    const wrong = (await totp(enrolled, now + 600)) === (await totp(enrolled, now)) ? '000000' : await totp(enrolled, now + 600);
    await field.fill(wrong);
    await second.getByRole('button', { name: 'Verify', exact: true }).click();
    await second.getByRole('alert').waitFor();
    await expect(second.getByLabel('Authentication code', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    await expectGoodPage(second, 'refused second factor');
    // The other way through the step: a recovery code, and a wrong one refused with its field marked.
    await second.getByRole('link', { name: 'Use a recovery code', exact: true }).click();
    const recovery = second.getByLabel('Recovery code', { exact: true });
    await recovery.waitFor();
    await expectGoodPage(second, 'recovery code');
    await recovery.fill('zzzz-zzzz-zz');
    await second.getByRole('button', { name: 'Verify', exact: true }).click();
    await second.getByRole('alert').waitFor();
    await expect(second.getByLabel('Recovery code', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    await expectGoodPage(second, 'refused recovery code');
    expect(secondProblems).toEqual([]);
  });
});
