/**
 * The account page in a real browser (Chromium): signed in through the usual sign-in pages and
 * back, then each section used by its labels and buttons, as a person would: the password
 * changed (the old one refused afterwards, a refresh token from before refused, another
 * browser's session ended), an application's access removed (its refresh token refused, consent
 * asked again), a session signed out by its device, the other sessions signed out (with the
 * tokens their applications got), the email address verified with the code the log mailer
 * printed, the name edited by keyboard alone (`name` follows in the ID token), the authenticator
 * app set up (the codes downloaded as a text file; the app then asked for by a new sign-in), each
 * destructive action asking first, and the app, as the last second factor, kept. After each
 * action its message is in view and has the focus. Every page the account page leads to passes
 * axe-core's WCAG 2.1 A and AA rules at 1280 and 390 px (screenshots in
 * test-artifacts/screenshots/account-*.png; the page's own at both widths also in docs/images/).
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../helpers/axe.ts';
import { authorizeRequest, chromiumAvailable, SCREENSHOTS, useBrowserDeployment, watchConsole, type RelyingParty } from '../helpers/chromium.ts';
import { outputWhen, ROOT, type RunningServer } from '../helpers/process.ts';
import { decodeJwt, postForm } from '../helpers/relying-party.ts';
import { awayFromStepEnd, totp } from '../helpers/totp.ts';

const chromiumReady = chromiumAvailable('the account page suite');

const CLIENT_ID = 'account-app';
const USERNAME = 'maud';
const PASSWORD = 'she tends the lighthouse lamp 4';
const NEW_PASSWORD = 'a new lamp for the old lighthouse 5';

describe.runIf(chromiumReady)('the account page in a browser', () => {
  const deployment = useBrowserDeployment({
    dataDirPrefix: 'idp-browser-account-',
    secret: 'e'.repeat(64),
    client: {
      client_id: CLIENT_ID, display_name: 'Account App', scopes: ['openid', 'profile', 'email', 'offline_access'],
      require_consent: true, grant_types: ['authorization_code', 'refresh_token'],
    },
    // The log mailer writes each message as an info line.
    env: { LOG_LEVEL: 'info' },
    user: { username: USERNAME, password: PASSWORD, given_name: 'Maud', family_name: 'Keeper', name: 'Maud Keeper', email: 'maud@example.com', email_verified: false },
  });
  const { newPage } = deployment;
  let rp: RelyingParty;
  let server: RunningServer;
  beforeAll(() => {
    ({ rp, server } = deployment);
  });

  const accountUrl = () => `${server.url}/account`;
  const heading = (page: Page) => page.getByRole('heading', { level: 1 }).innerText();

  /** The password in force (the password test changes it). */
  let password = PASSWORD;

  async function signIn(page: Page, typed = password): Promise<void> {
    await page.getByLabel('Username', { exact: true }).fill(USERNAME);
    await page.getByLabel('Password', { exact: true }).fill(typed);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  /** A browser of its own, signed in at the account page. */
  async function signedInElsewhere(): Promise<Page> {
    const other = await newPage();
    await other.goto(accountUrl());
    await signIn(other);
    await other.waitForURL((url) => url.pathname === '/account');
    return other;
  }

  /** Whether the page, opened again, asks to sign in (its session ended). */
  async function asksToSignIn(other: Page): Promise<boolean> {
    await other.goto(accountUrl());
    return (await other.getByLabel('Password', { exact: true }).count()) === 1;
  }

  async function expectAccessible(page: Page, name: string): Promise<void> {
    expect(await axeViolations(page, name, 'account')).toEqual([]);
  }

  /** The element has the focus and is inside the viewport: where the eye is after an action. */
  async function expectFocusedInView(target: Locator): Promise<void> {
    await expect(target.evaluate((element) => element === document.activeElement)).resolves.toBe(true);
    const box = await target.boundingBox();
    const viewport = target.page().viewportSize();
    expect(box && viewport && box.y >= 0 && box.y + Math.min(box.height, 40) <= viewport.height, JSON.stringify({ box, viewport })).toBe(true);
  }
  const status = (page: Page) => page.getByRole('status');

  /** Whether the last sign-in at the application asked for consent. */
  let consentAsked = false;

  /** A refresh token of the application, from a sign-in in its own browser (consent given when asked). */
  async function refreshTokenOfApp(scope = 'openid offline_access'): Promise<string> {
    return (await tokensOfApp(scope)).refresh_token as string;
  }

  /** The tokens of a sign-in at the application in its own browser. */
  async function tokensOfApp(scope: string): Promise<Record<string, unknown>> {
    const page = await newPage();
    const request = authorizeRequest(server, rp, CLIENT_ID, scope);
    await page.goto(request.url);
    await signIn(page);
    const allow = page.getByRole('button', { name: 'Allow', exact: true });
    await page.waitForURL((url) => url.pathname === '/callback' || url.pathname.startsWith('/interaction/'));
    if (new URL(page.url()).pathname !== '/callback') {
      consentAsked = true;
      await allow.click();
      await page.waitForURL((url) => url.pathname === '/callback');
    }
    const res = await postForm(`${server.url}/connect/token`, {
      grant_type: 'authorization_code', client_id: CLIENT_ID, code: new URL(page.url()).searchParams.get('code') ?? '',
      redirect_uri: rp.redirectUri, code_verifier: request.verifier,
    });
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  /** The server's audit line of `event` (waited for), parsed. */
  const auditLine = async (event: string): Promise<Record<string, unknown>> => {
    const pattern = new RegExp(`^.*"event":"${event}".*$`, 'm');
    return JSON.parse(pattern.exec(await outputWhen(server, (output) => pattern.test(output)))?.[0] ?? '{}') as Record<string, unknown>;
  };
  const refresh = (token: string) => postForm(`${server.url}/connect/token`, { grant_type: 'refresh_token', client_id: CLIENT_ID, refresh_token: token });

  let page: Page;

  it('signs in through the sign-in pages, comes back and shows the profile, accessibly', async () => {
    page = await newPage();
    const problems = watchConsole(page);
    await page.goto(accountUrl());
    await expect(page.locator('.lead').innerText()).resolves.toContain('your account');
    await signIn(page);
    await page.waitForURL((url) => url.pathname === '/account');
    expect(await heading(page)).toBe('Your account');
    const profile = await page.locator('.profile').innerText();
    for (const text of ['Maud Keeper', 'maud@example.com', 'Email verified', 'Username']) expect(profile).toContain(text);
    // Labels in words: no claim names on the page.
    expect(await page.locator('main').innerText()).not.toMatch(/preferred_username|email_verified|given_name/);
    await expect(page.getByRole('navigation', { name: 'Account sections' }).getByRole('link').allInnerTexts()).resolves.toEqual(
      ['Profile', 'Verify email', 'Password', 'Second factors', 'Applications', 'Sessions'],
    );
    await expectAccessible(page, 'account');
    // The page as people see it, for docs/account.md.
    const images = join(ROOT, 'docs', 'images');
    mkdirSync(images, { recursive: true });
    for (const width of [1280, 390]) copyFileSync(join(SCREENSHOTS, `account-account-${width}.png`), join(images, `account-${width}.png`));
    expect(problems).toEqual([]);
  });

  it('changes the password: the old one is refused afterwards, so is a refresh token from before; other browsers signed out', async () => {
    const before = await refreshTokenOfApp();
    const bystander = await signedInElsewhere();
    await page.getByLabel('Current password', { exact: true }).fill('not my password at all');
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('Confirm password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password', exact: true }).click();
    await expect(page.getByRole('alert').innerText()).resolves.toContain('current password is not right');
    await expectFocusedInView(page.getByRole('alert'));
    await expect(page.getByLabel('Current password', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    await expectAccessible(page, 'password-refused');

    await page.getByLabel('Current password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('Confirm password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Change password', exact: true }).click();
    await expect(page.getByRole('status').innerText()).resolves.toContain('Your password was changed');
    await expectFocusedInView(status(page));
    await expectAccessible(page, 'password-changed');

    password = NEW_PASSWORD;
    expect((await refresh(before)).status).toBe(400);
    expect(await asksToSignIn(bystander)).toBe(true);
    const other = await newPage();
    await other.goto(accountUrl());
    await signIn(other, PASSWORD);
    await expect(other.getByRole('alert').innerText()).resolves.toContain('incorrect');
    await signIn(other, NEW_PASSWORD);
    await other.waitForURL((url) => url.pathname === '/account');
  });

  it('lists the application and removes its access: its refresh token refused, consent asked again', async () => {
    const token = await refreshTokenOfApp();
    expect((await refresh(token)).status).toBe(200);
    await page.goto(accountUrl());
    const row = page.locator('.account-list li', { hasText: 'Account App' });
    await expect(row.locator('.list-detail').innerText()).resolves.toMatch(/^Since (just now|1 minute ago), last used (just now|1 minute ago)$/);
    await expect(row.locator('time').first().getAttribute('title')).resolves.toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    await expectAccessible(page, 'applications');
    await row.getByRole('button', { name: 'Remove access of Account App', exact: true }).click();
    await expectFocusedInView(page.getByRole('group', { name: 'Remove the access of Account App?' }));
    await page.getByRole('button', { name: 'Remove access', exact: true }).click();
    await expect(page.getByRole('status').innerText()).resolves.toContain('no longer has access');
    await expectFocusedInView(status(page));
    await expect(page.locator('.account-list li', { hasText: 'Account App' }).count()).resolves.toBe(0);
    expect((await refresh(token)).status).toBe(400);
    expect(await auditLine('access_removed')).toMatchObject({ client_id: CLIENT_ID, user_id: expect.stringMatching(/^\S+$/) });
    consentAsked = false;
    await refreshTokenOfApp();
    expect(consentAsked).toBe(true);
  });

  it('lists the sessions by device, address and times, signs one out, then the other browsers, with their applications\' tokens', async () => {
    const [one, other] = [await signedInElsewhere(), await signedInElsewhere()];
    await page.goto(accountUrl());
    const sessions = page.locator('#sessions .account-list li');
    const current = page.locator('#sessions li[aria-current="true"]');
    const currentText = await current.innerText();
    expect(currentText, JSON.stringify(currentText)).toMatch(/^Chrome on Linux This browser\nSigned in .* with password[a-z ]*, from 127\.0\.0\.1\nActive now$/);
    await expect(sessions.filter({ hasText: 'Last active' }).count()).resolves.toBeGreaterThanOrEqual(2);
    await expectAccessible(page, 'sessions');
    const count = await sessions.count();
    await sessions.filter({ hasText: 'Last active' }).first().getByRole('button', { name: /^Sign out Chrome on Linux, signed in / }).click();
    await expect(page.getByRole('status').innerText()).resolves.toContain('That session was signed out');
    await expectFocusedInView(status(page));
    await expect(sessions.count()).resolves.toBe(count - 1);
    expect([await asksToSignIn(one), await asksToSignIn(other)].filter(Boolean)).toHaveLength(1);
    const othersToken = await refreshTokenOfApp();
    await page.goto(accountUrl());
    await page.getByRole('button', { name: 'Sign out other sessions', exact: true }).click();
    await expect(page.getByRole('status').innerText()).resolves.toContain('other browser sessions were signed out');
    await expectFocusedInView(status(page));
    await expect(sessions.count()).resolves.toBe(1);
    expect(await asksToSignIn(other)).toBe(true);
    expect((await refresh(othersToken)).status).toBe(400);
    expect(await auditLine('sessions_ended')).toMatchObject({ user_id: expect.stringMatching(/^\S+$/), browser_sessions: expect.any(Number) });
    expect((await auditLine('sessions_ended')).browser_sessions).toBeGreaterThanOrEqual(1);
  });

  it('verifies the email address with the code the log mailer printed', async () => {
    await page.getByRole('button', { name: 'Send code', exact: true }).click();
    await expect(page.getByRole('status').innerText()).resolves.toContain('We sent a code');
    const mailLine = /^.*"mail":true.*Verify your email.*$/m;
    const line = mailLine.exec(await outputWhen(server, (output) => mailLine.test(output)))?.[0] ?? '';
    const code = /Your code: (\d{8})/.exec(line)?.[1] ?? '';
    expect(code, line).toMatch(/^\d{8}$/);
    await expectAccessible(page, 'email-code');
    await page.getByLabel('Code', { exact: true }).fill(code);
    await page.getByRole('button', { name: 'Verify email', exact: true }).click();
    await expect(page.getByRole('status').innerText()).resolves.toContain('Your email address is verified');
    await expectFocusedInView(status(page));
    await expect(page.locator('#profile-email_verified dd').innerText()).resolves.toBe('Yes');
  });

  it('edits the name by keyboard alone: the message has the focus, and `name` follows in the ID token', async () => {
    await page.goto(accountUrl());
    // From the top of the page: Tab to "Edit your name", open it, the fields, save.
    const focused = () => page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
    for (let i = 0; i < 20 && (await focused()) !== 'Edit your name'; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('Edit your name');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('given_name');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('Maudie');
    await page.keyboard.press('Enter');
    await expect(status(page).innerText()).resolves.toContain('Your name was saved');
    await expectFocusedInView(status(page));
    await expect(page.locator('#profile-name dd').innerText()).resolves.toBe('Maudie Keeper');
    expect(await auditLine('profile_updated')).toMatchObject({ fields: ['given_name', 'name'] });
    const tokens = await tokensOfApp('openid profile');
    expect(decodeJwt(tokens.id_token).payload).toMatchObject({ given_name: 'Maudie', name: 'Maudie Keeper' });
  });

  it('sets the authenticator app up from the QR code page (recovery codes shown once), signs in again with it, renews the codes, keeps the last factor', async () => {
    await page.goto(accountUrl());
    await page.getByRole('button', { name: 'Set up authenticator app', exact: true }).click();
    await page.locator('.qr svg').waitFor();
    await expectAccessible(page, 'totp-set-up');
    const secret = (await page.locator('.secret code').innerText()).replace(/\s+/g, '');
    await awayFromStepEnd();
    await page.getByLabel('Authentication code', { exact: true }).fill(await totp(secret, Math.floor(Date.now() / 1000)));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    // The recovery codes, shown once.
    expect(await heading(page)).toBe('Save your recovery codes');
    await expect(page.locator('.codes li').count()).resolves.toBe(10);
    await expectAccessible(page, 'recovery-codes');
    // Downloaded as a text file holding every code shown.
    const shown = await page.locator('.codes code').allInnerTexts();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download as a text file' }).click()]);
    expect(download.suggestedFilename()).toMatch(/recovery-codes\.txt$/);
    const text = readFileSync(await download.path(), 'utf8');
    for (const code of shown) expect(text).toContain(code);
    // Printed: the codes, not the buttons.
    await page.emulateMedia({ media: 'print' });
    await expect(page.getByRole('button', { name: 'Continue', exact: true }).isVisible()).resolves.toBe(false);
    await expect(page.locator('.codes').isVisible()).resolves.toBe(true);
    await page.emulateMedia({ media: 'screen' });
    // This session signed in with the password alone: the app is asked for now, by a new sign-in.
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await signIn(page);
    await page.getByLabel('Authentication code', { exact: true }).fill(await totp(secret, Math.floor(Date.now() / 1000) + 30));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await expect(page.getByRole('status').innerText()).resolves.toContain('authenticator app is set up');
    await expectFocusedInView(status(page));
    await expect(page.locator('body').innerText()).resolves.toContain('10 of 10 recovery codes left.');
    // Voiding the codes asks first, in place of the button; nothing happens until confirmed.
    await page.getByRole('button', { name: 'Generate new codes', exact: true }).click();
    const confirm = page.getByRole('group', { name: 'Generate new recovery codes?' });
    await expectFocusedInView(confirm);
    await expectAccessible(page, 'codes-confirm');
    await confirm.getByRole('button', { name: 'Generate new codes', exact: true }).click();
    expect(await heading(page)).toBe('Save your recovery codes');
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await expect(page.getByRole('status').innerText()).resolves.toContain('new recovery codes are in force');
    await expectFocusedInView(status(page));
    await expectAccessible(page, 'totp-added');
    // The only second factor stays: the refusal beside its action, with the focus.
    await page.getByRole('button', { name: 'Remove authenticator app', exact: true }).click();
    await page.getByRole('group', { name: 'Remove the authenticator app?' }).getByRole('button', { name: 'Remove authenticator app', exact: true }).click();
    const refusal = page.getByRole('alert');
    await expect(refusal.innerText()).resolves.toContain('This is your last second factor');
    await expectFocusedInView(refusal);
    await expectAccessible(page, 'totp-kept');
    await expect(page.getByRole('button', { name: 'Remove authenticator app', exact: true }).count()).resolves.toBe(1);
  });
});
