/**
 * "Forgot password" in a real browser (Chromium), by the labels and button names people see:
 * from the sign-in page's link to the code form, the mailed link opened in another browser (the
 * code filled in), the new password, which signs the browser in (amr pwd) and lands on the
 * relying party's callback; and the recovery page opened from a bookmark, by keyboard only,
 * ending at the account page. Each recovery page passes axe's
 * WCAG 2.1 A and AA rules at 1280 and 390 px (screenshots: test-artifacts/screenshots/recovery-*).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../helpers/axe.ts';
import { authorizeRequest, chromiumAvailable, useBrowserDeployment, watchConsole, type RelyingParty } from '../helpers/chromium.ts';
import type { RunningServer } from '../helpers/process.ts';
import { decodeJwt, postForm } from '../helpers/relying-party.ts';
import { codeIn, linkIn, nthMailTo } from './recovery-support.ts';

const chromiumReady = chromiumAvailable('the browser recovery suite');

const CLIENT_ID = 'recovery-app';
const USERNAME = 'rosa';
const EMAIL = 'rosa@example.com';
const NEW_PASSWORD = 'she found her way back in 9';

describe.runIf(chromiumReady)('a browser recovering a forgotten password', () => {
  const deployment = useBrowserDeployment({
    dataDirPrefix: 'idp-browser-recovery-',
    secret: 'c'.repeat(64),
    client: { client_id: CLIENT_ID, display_name: 'Recovery App', scopes: ['openid'], require_consent: false },
    user: { username: USERNAME, password: 'the password she forgot 1', email: EMAIL, email_verified: true },
    env: { LOG_LEVEL: 'info', IDP_BRAND_NAME: 'Acme' },
  });
  let rp: RelyingParty;
  let server: RunningServer;
  beforeAll(() => {
    ({ rp, server } = deployment);
  });

  it('"Forgot password?", the code by mail, its link in another browser, a new password: signed in (amr pwd), on to the application', async () => {
    const page = await deployment.newPage();
    const problems = watchConsole(page);
    const request = authorizeRequest(server, rp, CLIENT_ID, 'openid');
    await page.goto(request.url);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByLabel('Username or email', { exact: true }).waitFor();
    expect(await axeViolations(page, 'request', 'recovery')).toEqual([]);
    await page.getByLabel('Username or email', { exact: true }).fill(EMAIL);
    await page.getByRole('button', { name: 'Send code', exact: true }).click();
    await page.getByLabel('Code', { exact: true }).waitFor();
    expect(await axeViolations(page, 'code', 'recovery')).toEqual([]);

    const mail = await nthMailTo([server], EMAIL, 1);
    const code = codeIn(mail);
    // A wrong code first, in this browser: an alert, the field marked.
    await page.getByLabel('Code', { exact: true }).fill(code === '00000000' ? '11111111' : '00000000');
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByLabel('Code', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await axeViolations(page, 'code-error', 'recovery')).toEqual([]);

    // The link, opened on "the phone": the code is filled in.
    const phone = await deployment.newPage({ width: 390, height: 844 });
    await phone.goto(linkIn(mail));
    expect(await phone.getByLabel('Code', { exact: true }).inputValue()).toBe(code);
    await phone.getByRole('button', { name: 'Continue', exact: true }).click();
    await phone.getByLabel('New password', { exact: true }).waitFor();
    expect(await phone.locator('body').innerText()).toContain('Choose a new password for your account.');
    expect(await axeViolations(phone, 'password', 'recovery')).toEqual([]);
    await phone.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await phone.getByLabel('Confirm password', { exact: true }).fill(NEW_PASSWORD);
    await phone.getByRole('button', { name: 'Change password', exact: true }).click();

    // Signed in with the new password (amr pwd): on with the request, nothing typed twice.
    await phone.waitForURL((url) => url.origin === `http://127.0.0.1:${rp.port}` && url.pathname === '/callback');
    const landed = new URL(phone.url()).searchParams;
    expect(landed.get('error')).toBeNull();
    expect(landed.get('state')).toBe(request.state);
    const tokens = await postForm(`${server.url}/connect/token`, {
      grant_type: 'authorization_code', client_id: CLIENT_ID, code: landed.get('code') ?? '', redirect_uri: rp.redirectUri, code_verifier: request.verifier,
    });
    expect(tokens.status, tokens.text).toBe(200);
    expect(decodeJwt(tokens.body.id_token).payload.amr).toEqual(['pwd']);
    expect(problems).toEqual([]);
  });

  it('opened from a bookmark, by keyboard only: the code, the new password, then the account page, signed in', async () => {
    const page = await deployment.newPage();
    const problems = watchConsole(page);
    await page.goto(`${server.url}/account/recover`);
    expect(await page.getByRole('link', { name: 'Back to sign in' }).getAttribute('href')).toBe('/account');
    // Each page puts the cursor in its one field: typing and Enter are all it takes.
    await page.keyboard.type(USERNAME);
    await page.keyboard.press('Enter');
    await page.getByLabel('Code', { exact: true }).waitFor();
    expect(await page.getByRole('link', { name: 'Send a new code' }).getAttribute('href')).toBe('/account/recover');
    expect(await axeViolations(page, 'code-links', 'recovery')).toEqual([]);
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('code');
    await page.keyboard.type(codeIn(await nthMailTo([server], EMAIL, 2)));
    await page.keyboard.press('Enter');
    await page.getByLabel('New password', { exact: true }).waitFor();
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('new_password');
    await page.keyboard.type(`${NEW_PASSWORD} again`);
    await page.keyboard.press('Tab');
    await page.keyboard.type(`${NEW_PASSWORD} again`);
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/account');
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Your account');
    expect(await page.getByRole('status').innerText()).toContain('Your password was changed');
    expect(problems).toEqual([]);
  });
});
