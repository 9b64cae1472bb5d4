/**
 * Passkeys on the account page in a real browser: Chromium with a virtual authenticator (DevTools
 * Protocol) adds a named passkey from "Second factors" (the first second factor: ten recovery
 * codes shown once, audited and mailed, then the passkey asked for by a new sign-in), renames it, signs in again with it as the second factor,
 * and removes it: refused while it is the last second factor, taken once the authenticator app is
 * there too. The page, with passkeys, passes axe at 1280 and 390 px and allows only the service's
 * own script.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../helpers/axe.ts';
import { chromiumAvailable, launchChromium, watchConsole } from '../helpers/chromium.ts';
import { freePort, seedWith, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { awayFromStepEnd, totp } from '../helpers/totp.ts';
import { PASSWORD, auditLines, passkeyPage, type VirtualAuthenticator } from './passkey-support.ts';

const chromiumReady = chromiumAvailable('the account page passkeys suite');
const USERNAME = 'ada';
const EMAIL = 'ada@example.test';

describe.runIf(chromiumReady)('passkeys on the account page in a browser', () => {
  const data = tempDir('idp-browser-account-passkeys-');
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let authenticator: VirtualAuthenticator;
  /** A domain name: WebAuthn takes no IP address. */
  let base = '';
  /** The policy of the page shown now. */
  let shownPolicy: () => string = () => '';

  beforeAll(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    const env = { IDP_DATA_DIR: data.path, IDP_SECRET: 'a7'.repeat(32), IDP_BASE_URL: base, LOG_LEVEL: 'info' };
    await seedWith({ api_scopes: [], clients: [], users: [{ username: USERNAME, password: PASSWORD, name: 'Ada Account', email: EMAIL }] }, env);
    server = await startServer(env, undefined, { port });
    browser = await launchChromium();
    ({ page, authenticator, policy: shownPolicy } = await passkeyPage(browser));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    data.remove();
  });

  const accountUrl = () => `${base}/account`;
  const notice = () => page.locator('p.notice[role="status"]').innerText();
  const passkeyNames = () => page.locator('.passkey-name').allInnerTexts();

  async function enterPassword(): Promise<void> {
    await page.getByLabel('Username', { exact: true }).fill(USERNAME);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  it('adds a named passkey: the first second factor, with its recovery codes shown once, audited and mailed', async () => {
    const problems = watchConsole(page);
    await page.goto(accountUrl());
    await enterPassword();
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    expect(shownPolicy()).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(await axeViolations(page, 'no-passkey', 'account-passkeys')).toEqual([]);

    await page.getByLabel('Name of the passkey', { exact: true }).fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey', exact: true }).click();
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    await expect(page.locator('.codes li').count()).resolves.toBe(10);
    // This session signed in with the password alone: the passkey is asked for now, by a new sign-in.
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await enterPassword();
    await page.getByRole('button', { name: 'Use a passkey', exact: true }).click();
    await expect(notice()).resolves.toContain('The passkey is added.');
    expect(await passkeyNames()).toEqual(['Work laptop']);
    await expect(page.locator('body').innerText()).resolves.toContain('10 of 10 recovery codes left.');
    expect(await authenticator.credentials()).toHaveLength(1);

    const output = server.output();
    expect(auditLines(output, 'mfa_added')).toEqual([expect.objectContaining({ kind: 'passkey' })]);
    expect(auditLines(output, 'recovery_codes_generated')).toEqual([expect.objectContaining({ count: 10 })]);
    const mails = output.split('\n').filter((l) => l.includes('"mail":true')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(mails).toEqual([expect.objectContaining({ to: EMAIL })]);
    expect(String(mails[0]?.text)).toContain('A passkey "Work laptop" was set up, with 10 new recovery codes.');
    expect(await axeViolations(page, 'passkey-added', 'account-passkeys')).toEqual([]);
    expect(problems).toEqual([]);
  });

  it('renames the passkey, behind its disclosure', async () => {
    const field = page.getByLabel('New name for Work laptop', { exact: true });
    await expect(field.isVisible()).resolves.toBe(false);
    await page.locator('summary', { hasText: 'Rename' }).click();
    await field.fill('Desk key');
    await page.getByRole('button', { name: 'Rename', exact: true }).click();
    await expect(notice()).resolves.toContain('The passkey was renamed.');
    expect(await passkeyNames()).toEqual(['Desk key']);
  });

  /** "Remove" asks first; its confirmation's own button removes. */
  async function removePasskey(name: string): Promise<void> {
    await page.getByRole('button', { name: `Remove ${name}`, exact: true }).click();
    await page.getByRole('group', { name: `Remove the passkey ${name}?` }).getByRole('button', { name: `Remove ${name}`, exact: true }).click();
  }

  it('refuses to remove the last second factor, the refusal beside the passkey and focused', async () => {
    await removePasskey('Desk key');
    await expect(page.locator('#passkeys-error').innerText()).resolves.toContain('This is your last second factor');
    await expect(page.locator('#passkeys-error').evaluate((element) => element === document.activeElement)).resolves.toBe(true);
    expect(await passkeyNames()).toEqual(['Desk key']);
    expect(auditLines(server.output(), 'mfa_removed')).toEqual([]);
    expect(await axeViolations(page, 'passkey-refused', 'account-passkeys')).toEqual([]);
  });

  it('confirms it is the user with the passkey as the second factor: the account fixed, the reason said', async () => {
    await page.goto(`${accountUrl()}/sign-in-again?for=passkey-remove`);
    expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe("Confirm it's you");
    await expect(page.locator('.lead').innerText()).resolves.toBe("Confirm it's you to change your second factors.");
    const username = page.getByLabel('Username', { exact: true });
    await expect(username.inputValue()).resolves.toBe(USERNAME);
    await expect(username.isEditable()).resolves.toBe(false);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Use a passkey', exact: true }).click();
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/account');
    // Back at the action that asked, its section saying what can be done now, with the focus.
    await expect(notice()).resolves.toBe("Thank you, it's you. You can now remove the passkey.");
    await expect(page.locator('#passkeys-notice').evaluate((element) => element === document.activeElement)).resolves.toBe(true);
    await expect(page.locator('.account-list li').first().innerText()).resolves.toContain('last used');
    expect(auditLines(server.output(), 'sign_in').at(-1)).toMatchObject({ result: 'success', amr: ['pwd', 'mfa'] });
  });

  it('removes the passkey once the authenticator app is there too', async () => {
    await page.getByRole('button', { name: 'Set up authenticator app', exact: true }).click();
    const secret = (await page.locator('.secret code').innerText()).replace(/\s+/g, '');
    // The account page's other pages run no script.
    expect(shownPolicy()).not.toMatch(/script-src/);
    await awayFromStepEnd();
    await page.getByLabel('Authentication code', { exact: true }).fill(await totp(secret, Math.floor(Date.now() / 1000)));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await expect(notice()).resolves.toContain('authenticator app is set up');

    await removePasskey('Desk key');
    await expect(notice()).resolves.toContain('The passkey was removed.');
    expect(await passkeyNames()).toEqual([]);
    expect(auditLines(server.output(), 'mfa_removed')).toEqual([expect.objectContaining({ kinds: ['passkey'], actor: 'user' })]);
    expect(server.output()).toContain('The passkey \\"Desk key\\" was removed.');
  });
});
