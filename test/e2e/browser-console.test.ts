/**
 * The administration console in a real browser (Chromium): an administrator signs in through
 * the service's own sign-in pages (password, then the authenticator code), lands on the
 * overview, and creates a client with the keyboard alone (Tab, typing, Space, Enter), its secret
 * shown once; it rotates that client's secret and locks a user with the keyboard alone too (Tab
 * to the button, Enter). The overview, the clients, a client's page and the users pass axe-core's WCAG 2.1
 * A and AA rules at 1280 and 390 px, nothing scrolls sideways at 390 px, and no script or style
 * is refused by the CSP (screenshots in test-artifacts/screenshots/console-*.png; the overview's
 * and a client's page's also in docs/images/).
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../helpers/axe.ts';
import { chromiumAvailable, SCREENSHOTS, useBrowserDeployment, watchConsole } from '../helpers/chromium.ts';
import { consoleUser } from '../helpers/console.ts';
import { ROOT, type RunningServer } from '../helpers/process.ts';
import { awayFromStepEnd, totp } from '../helpers/totp.ts';

const chromiumReady = chromiumAvailable('the console suite');
const ADA = consoleUser('ada');

describe.runIf(chromiumReady)('the administration console in a browser', () => {
  const deployment = useBrowserDeployment({
    dataDirPrefix: 'idp-browser-console-',
    secret: 'c'.repeat(64),
    client: { client_id: 'shop', display_name: 'The shop', scopes: ['openid', 'profile'], require_consent: false },
    user: ADA,
  });
  let server: RunningServer;
  let page: Page;
  let refused: string[];
  beforeAll(async () => {
    ({ server } = deployment);
    page = await deployment.newPage();
    refused = watchConsole(page);
  });

  const heading = () => page.getByRole('heading', { level: 1 }).innerText();

  /** Presses Tab until the focused element matches `selector` (at most 80 times). */
  async function tabTo(selector: string): Promise<void> {
    for (let i = 0; i < 80; i++) {
      if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
      await page.keyboard.press('Tab');
    }
    throw new Error(`Tab never reached ${selector}`);
  }

  /** Presses `key` (Tab or Shift+Tab) until the focused element is the button named `name` (at most 120 times). */
  async function tabToButton(name: string, key: 'Tab' | 'Shift+Tab' = 'Tab'): Promise<void> {
    for (let i = 0; i < 120; i++) {
      if (await page.evaluate((n) => document.activeElement instanceof HTMLButtonElement && document.activeElement.innerText.trim() === n, name)) return;
      await page.keyboard.press(key);
    }
    throw new Error(`${key} never reached the button ${name}`);
  }

  async function expectAccessible(name: string): Promise<void> {
    expect(await axeViolations(page, name, 'console')).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });
  }

  it('signs the administrator in through the sign-in pages and the authenticator code', async () => {
    await page.goto(`${server.url}/admin`);
    await page.getByLabel('Username', { exact: true }).fill(ADA.username);
    await page.getByLabel('Password', { exact: true }).fill(ADA.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await awayFromStepEnd();
    await page.getByLabel('Authentication code').fill(await totp(ADA.totp_secret ?? '', Math.floor(Date.now() / 1000)));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/admin');
    expect(await heading()).toBe('Overview');
    await expect(page.getByRole('navigation', { name: 'Console' }).getByRole('link').allInnerTexts()).resolves.toStrictEqual(['Overview', 'Clients', 'Users', 'API scopes', 'Signing keys', 'Webhooks', 'Audit log']);
    await expectAccessible('overview');
  });

  it('creates a client with the keyboard alone, its secret shown once', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Clients' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/admin/clients');
    await expectAccessible('clients');
    await tabTo('a[href$="/admin/clients/new"]');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/admin/clients/new');
    expect(await heading()).toBe('Create client');
    await tabTo('[name="client_id"]');
    await page.keyboard.type('billing');
    await page.keyboard.press('Tab');
    await page.keyboard.type('Billing service');
    await tabTo('[name="grant_types"]');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('client_credentials');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('openid');
    await tabTo('button[type="submit"]');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/admin/clients');
    expect(await heading()).toBe('Client billing');
    expect((await page.locator('#one-time-secret').innerText()).length).toBeGreaterThanOrEqual(43);
    await page.goto(`${server.url}/admin/clients/billing`);
    expect(await page.locator('#one-time-secret').count()).toBe(0);
    await expectAccessible('client');
  });

  it('rotates a client\'s secret with the keyboard alone, the new secret shown once', async () => {
    await page.goto(`${server.url}/admin/clients/billing`);
    expect(await page.locator('#one-time-secret').count()).toBe(0);
    await tabToButton('Rotate secret');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/admin/clients/billing/secret');
    expect(await heading()).toBe('Client billing');
    expect((await page.locator('#one-time-secret').innerText()).length).toBeGreaterThanOrEqual(43);
    expect(await page.getByText('The old secret keeps working until').count()).toBe(1);
  });

  it('locks a user with the keyboard alone, the page then offering to unlock', async () => {
    await page.goto(`${server.url}/admin/users/new`);
    await page.getByLabel('Username', { exact: true }).fill('grace');
    await page.getByLabel('Password', { exact: true }).fill(ADA.password);
    await page.getByLabel('Username', { exact: true }).press('Enter');
    await page.waitForURL((url) => url.pathname === '/admin/users');
    expect(await heading()).toBe('User grace');
    expect(await page.getByRole('button', { name: 'Unlock', exact: true }).count()).toBe(0);
    await tabToButton('Lock');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname.endsWith('/lock'));
    expect(await heading()).toBe('User grace');
    expect(await page.getByRole('status').innerText()).toContain('Locked');
    expect(await page.locator('.profile-row', { hasText: 'State' }).locator('dd').innerText()).toMatch(/^Locked/);
    expect(await page.getByRole('button', { name: 'Unlock', exact: true }).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Lock', exact: true }).count()).toBe(0);
  });

  it('shows the users accessibly, and refused nothing of the pages', async () => {
    await page.goto(`${server.url}/admin/users`);
    expect(await heading()).toBe('Users');
    await expectAccessible('users');
    expect(refused).toStrictEqual([]);
  });

  it('keeps screenshots of the overview and a client\'s page for the docs', () => {
    const images = join(ROOT, 'docs', 'images');
    mkdirSync(images, { recursive: true });
    for (const [shot, name] of [['overview', 'console-overview'], ['client', 'console-client']]) {
      for (const width of [1280, 390]) copyFileSync(join(SCREENSHOTS, `console-${shot}-${width}.png`), join(images, `${name}-${width}.png`));
    }
  });
});
