/**
 * A real browser signs in: Chromium (Debian's, driven by playwright-core) follows the
 * authorization code flow with PKCE through the running service's pages, by their labels and
 * button names as the README's Pages section gives them, to a relying party's callback. It also keeps
 * screenshots of the pages in test-artifacts/screenshots/ for people to look at.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, authorizeRequest, chromiumAvailable, useBrowserDeployment, watchConsole, type RelyingParty } from '../helpers/chromium.ts';
import type { RunningServer } from '../helpers/process.ts';

const chromiumReady = chromiumAvailable('the browser suite');

const SECRET = 'c'.repeat(64);
const CLIENT_ID = 'browser-shop';
const CLIENT_NAME = 'Acme Web Shop';
const USERNAME = 'alice';
const PASSWORD = 'correct horse battery staple';

describe.runIf(chromiumReady)('a browser signing in', () => {
  const deployment = useBrowserDeployment({
    dataDirPrefix: 'idp-browser-',
    secret: SECRET,
    client: { client_id: CLIENT_ID, display_name: CLIENT_NAME, scopes: ['openid', 'profile', 'email'], require_consent: true },
    user: {
      username: USERNAME, password: PASSWORD, given_name: 'Alice', family_name: 'Liddell', name: 'Alice Liddell',
      email: 'alice@example.com', email_verified: true,
    },
  });
  const { newPage } = deployment;
  let rp: RelyingParty;
  let server: RunningServer;
  beforeAll(() => {
    ({ rp, server } = deployment);
  });

  it('signs in, consents and lands on the callback with a code, the state and the issuer', async () => {
    const page = await newPage();
    const problems = watchConsole(page);
    const request = authorizeRequest(server, rp, CLIENT_ID, 'openid profile email');

    await page.goto(request.url);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Sign in');
    await expect(page.getByText(`to continue to ${CLIENT_NAME}`).count()).resolves.toBe(1);
    // The stylesheet arrived under the page's CSP: the primary button is painted, not default grey.
    const signIn = page.getByRole('button', { name: 'Sign in', exact: true });
    await expect(signIn.evaluate((b) => getComputedStyle(b).backgroundColor)).resolves.toBe('rgb(29, 78, 216)');
    await page.getByLabel('Username', { exact: true }).fill(USERNAME);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.screenshot({ path: join(SCREENSHOTS, 'sign-in.png'), fullPage: true, animations: 'disabled' });
    await signIn.click();

    const allow = page.getByRole('button', { name: 'Allow', exact: true });
    await allow.waitFor();
    const consentText = await page.locator('body').innerText();
    expect(consentText).toContain(CLIENT_NAME);
    for (const scope of ['openid', 'profile', 'email']) expect(consentText).toContain(scope);
    await expect(page.getByRole('button', { name: 'Deny', exact: true }).count()).resolves.toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'consent.png'), fullPage: true, animations: 'disabled' });
    await allow.click();

    await page.waitForURL((url) => url.origin === `http://127.0.0.1:${rp.port}` && url.pathname === '/callback');
    const landed = new URL(page.url()).searchParams;
    expect(landed.get('code')).toMatch(/^\S{16,}$/);
    expect(landed.get('state')).toBe(request.state);
    expect(landed.get('iss')).toBe(`${server.url}/`);
    expect(landed.get('error')).toBeNull();
    expect(rp.received.map((q) => q.get('state'))).toContain(request.state);
    expect(problems).toEqual([]);
  });

  it('shows the sign-in page full width on a phone', async () => {
    const page = await newPage({ width: 390, height: 844 });
    await page.goto(authorizeRequest(server, rp, CLIENT_ID, 'openid profile email').url);
    await page.getByLabel('Username', { exact: true }).waitFor();
    const cardWidth = await page.locator('.card').evaluate((card) => card.getBoundingClientRect().width);
    expect(cardWidth).toBeGreaterThanOrEqual(375); // the whole viewport, give or take a scrollbar
    await page.screenshot({ path: join(SCREENSHOTS, 'sign-in-phone.png'), fullPage: true, animations: 'disabled' });
  });

  it('keeps a wrong password on the sign-in page with an alert', async () => {
    const page = await newPage();
    await page.goto(authorizeRequest(server, rp, CLIENT_ID, 'openid profile email').url);
    await page.getByLabel('Username', { exact: true }).fill(USERNAME);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();

    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect((await alert.innerText()).trim().length).toBeGreaterThan(0);
    // Still the sign-in page, ready for another try, and the message is tied to the form.
    await expect(page.getByRole('button', { name: 'Sign in', exact: true }).count()).resolves.toBe(1);
    await expect(page.getByLabel('Password', { exact: true }).inputValue()).resolves.toBe('');
    const describedBy = await page.locator('form').getAttribute('aria-describedby');
    expect(describedBy).toBeTruthy();
    expect(await alert.getAttribute('id')).toBe(describedBy);
    expect(new URL(page.url()).origin).toBe(server.url);
    expect(rp.received.some((q) => q.has('error'))).toBe(false);
    await page.screenshot({ path: join(SCREENSHOTS, 'sign-in-error.png'), fullPage: true, animations: 'disabled' });
  });
});
