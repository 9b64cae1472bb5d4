/**
 * Every page, in a real browser, passes axe-core's WCAG 2.1 A and AA rules at a desktop width and
 * at a phone's 390 px: sign-in, failed sign-in, enrolment, password change (before and after a
 * refused try), consent, second factor, sign-out confirmation, sign-out cancelled, signed-out and
 * the error page. One deployment, branded (IDP_BRAND_NAME, an SVG IDP_BRAND_LOGO and a light
 * IDP_BRAND_COLOR), walked through once; on the way, what each page tells people is checked: the
 * brand, the password rules before the first try, the fields in error, the QR code's text
 * alternative, the account named at sign-out, Cancel, the way back to the application and the
 * request id on the error page. Screenshots of each page at each width go to
 * test-artifacts/screenshots/branded-*.png for people to look at.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, authorizeRequest, chromiumAvailable, useBrowserDeployment, watchConsole, type RelyingParty } from '../helpers/chromium.ts';
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
const WIDTHS = [{ width: 1280, height: 800 }, { width: 390, height: 844 }];
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const logoDir = tempDir('idp-brand-');
const LOGO = join(logoDir.path, 'logo.svg');
writeFileSync(LOGO, '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 40" width="120" height="40"><rect width="40" height="40" rx="8" fill="#ffd400"/><rect x="48" y="14" width="70" height="12" rx="3" fill="#333"/></svg>');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[]; failureSummary?: string }>;
}

/** axe-core's WCAG 2.1 A/AA rules on the page as it is, at each width; the violations, readable. */
async function axeViolations(page: Page, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    // Evaluated through the DevTools protocol, which the page's CSP (no script at all) does not govern.
    if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: unknown[] }> } }).axe;
      const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
      return JSON.parse(JSON.stringify(result.violations)) as unknown[];
    }) as Violation[];
    await page.screenshot({ path: join(SCREENSHOTS, `branded-${name.replace(/\W+/g, '-')}-${size.width}.png`), fullPage: true, animations: 'disabled' });
    for (const v of violations) {
      found.push(`${name} at ${size.width}px: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.map((n) => `${n.target.join(' ')} ${n.failureSummary ?? ''}`).join(' | ')}`);
    }
  }
  await page.setViewportSize(WIDTHS[0] ?? { width: 1280, height: 800 });
  return found;
}

/** No axe violation, the title is the heading followed by the brand, the brand is on the page. */
async function expectGoodPage(page: Page, name: string): Promise<void> {
  expect(await axeViolations(page, name)).toEqual([]);
  const heading = (await page.getByRole('heading', { level: 1 }).innerText()).trim();
  expect(await page.title(), name).toBe(`${heading} – ${BRAND_NAME}`);
  await expect(page.locator('.brand-name').innerText(), name).resolves.toBe(BRAND_NAME);
  // The logo is the service's own file, drawn.
  const logo = page.locator('img.brand-logo');
  expect(new URL((await logo.getAttribute('src')) ?? '', page.url()).pathname, name).toBe('/assets/brand-logo');
  expect(await logo.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), name).toBe(true);
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

  it('enrolment: the QR code has a text alternative', async () => {
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const qr = page.getByRole('img', { name: /QR code/ });
    await qr.waitFor();
    await expectGoodPage(page, 'enrolment');
    const text = await page.locator('body').innerText();
    enrolled = (/\b((?:[A-Z2-7]{4} )+[A-Z2-7]{1,4})\b/.exec(text)?.[1] ?? '').replace(/\s+/g, '');
    expect(enrolled.length).toBeGreaterThanOrEqual(26);
    await awayFromStepEnd();
    await page.getByLabel('Authentication code', { exact: true }).fill(await totp(enrolled, Math.floor(Date.now() / 1000)));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
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

  it('signed out, with a link back to the application', async () => {
    await page.goto(`${server.url}/connect/logout?client_id=${CLIENT_ID}`);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'You have signed out' }).waitFor();
    expect(await page.getByRole('link', { name: `Return to ${CLIENT_NAME}` }).getAttribute('href')).toBe(`http://127.0.0.1:${rp.port}/`);
    await expectGoodPage(page, 'signed out');
  });

  it('error page: the request id to quote, the same as the response header', async () => {
    const response = await page.goto(`${server.url}/connect/authorize?client_id=nobody&response_type=code&scope=openid`);
    expect(response?.status()).toBe(400);
    const requestId = response?.headers()['x-request-id'] ?? '';
    expect(requestId).not.toBe('');
    await expect(page.locator('.request-id').innerText()).resolves.toBe(requestId);
    expect(await page.locator('body').innerText()).toContain('Error code: ');
    await expectGoodPage(page, 'error');
    expect(problems).toEqual([]);
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
    expect(secondProblems).toEqual([]);
  });
});
