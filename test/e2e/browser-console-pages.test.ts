/**
 * The console's API scopes, signing keys, webhooks and audit log pages, and the overview's
 * sign-in chart, in a real browser (Chromium): signed in through the sign-in pages with the
 * authenticator code, each page used by its labels and buttons (a refusal shown, a secret shown
 * once, a retirement refused then confirmed), and each state passing axe-core's WCAG 2.1 A and
 * AA rules at 1280 and 390 px, with nothing scrolling sideways at 390 px (screenshots in
 * test-artifacts/screenshots/console-*.png).
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from '../helpers/axe.ts';
import { chromiumAvailable, useBrowserDeployment, watchConsole } from '../helpers/chromium.ts';
import { consoleUser } from '../helpers/console.ts';
import type { RunningServer } from '../helpers/process.ts';
import { awayFromStepEnd, totp } from '../helpers/totp.ts';

const chromiumReady = chromiumAvailable('the console pages suite');
const ADMIN = consoleUser('ada');

describe.runIf(chromiumReady)('the console pages in a browser', () => {
  const deployment = useBrowserDeployment({
    dataDirPrefix: 'idp-browser-console-pages-',
    secret: 'c'.repeat(64),
    client: { client_id: 'console-pages-app', display_name: 'Console Pages App', scopes: ['openid'], require_consent: false },
    user: ADMIN,
  });
  let server: RunningServer;
  let page: Page;
  let problems: string[];

  beforeAll(async () => {
    server = deployment.server;
    page = await deployment.newPage();
    problems = watchConsole(page);
    await page.goto(`${server.url}/admin/api-scopes`);
    await page.getByLabel('Username', { exact: true }).fill(ADMIN.username);
    await page.getByLabel('Password', { exact: true }).fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const code = page.getByLabel('Authentication code', { exact: true });
    await code.waitFor();
    await awayFromStepEnd();
    await code.fill(await totp(ADMIN.totp_secret ?? '', Math.floor(Date.now() / 1000)));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await page.waitForURL((url) => url.pathname === '/admin/api-scopes');
  });

  /** No axe violation at either width, and nothing wider than the 390 px window. */
  async function expectUsable(name: string): Promise<void> {
    expect(await axeViolations(page, name, 'console')).toEqual([]);
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(overflow, `${name} scrolls sideways at 390 px`).toBeLessThanOrEqual(0);
    expect(problems).toEqual([]);
  }

  const alert = () => page.getByRole('alert').first().innerText();

  it('API scopes: added, a repeat refused beside the name', async () => {
    await page.getByLabel('Name', { exact: true }).fill('orders.read');
    await page.getByRole('button', { name: 'Add scope', exact: true }).click();
    await page.getByRole('status').waitFor();
    await page.getByLabel('Name', { exact: true }).fill('orders.read');
    await page.getByRole('button', { name: 'Add scope', exact: true }).click();
    await expect(alert()).resolves.toBe('API scope orders.read already exists');
    await expect(page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    await expectUsable('api-scopes');
  });

  it('signing keys: rotated, the former key\'s retirement refused and offered to force, then forced', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Signing keys' }).click();
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    await page.getByRole('status').waitFor();
    await page.getByRole('row').filter({ hasText: 'previous' }).getByRole('button', { name: /^Retire/ }).click();
    await expect(alert()).resolves.toMatch(/may still verify tokens until/);
    await expectUsable('keys-refused');
    await page.getByRole('button', { name: 'Retire anyway', exact: true }).click();
    await expect(page.getByRole('status').innerText()).resolves.toMatch(/is retired/);
    await expectUsable('keys');
  });

  it('webhooks: a bad URL refused beside its field, an endpoint created with its secret once, a test event sent', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/hooks#part');
    await page.getByLabel('Event types', { exact: true }).fill('sign_in\nadmin_change');
    await page.getByLabel('Description', { exact: true }).fill('Operations');
    await page.getByRole('button', { name: 'Create endpoint', exact: true }).click();
    await expect(alert()).resolves.toContain('must not carry a fragment');
    await expectUsable('webhooks-refused');
    await page.getByLabel('URL', { exact: true }).fill('http://127.0.0.1:9/hooks');
    await page.getByRole('button', { name: 'Create endpoint', exact: true }).click();
    await expect(page.locator('#one-time-secret').innerText()).resolves.toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Send test event', exact: true }).click();
    await expect(page.getByRole('status').innerText()).resolves.toContain('webhook.test');
    await expectUsable('webhook');
    await page.getByRole('link', { name: 'Webhooks', exact: true }).first().click();
    await expectUsable('webhooks');
  });

  it('audit log: filtered by type, a time without a zone refused beside its field', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Type', { exact: true }).selectOption('admin_change');
    await page.getByRole('button', { name: 'Show events', exact: true }).click();
    await expect(page.getByRole('table').innerText()).resolves.toContain('admin_change');
    await expectUsable('events');
    await page.getByLabel('Since', { exact: true }).fill('2026-11-29T10:00');
    await page.getByRole('button', { name: 'Show events', exact: true }).click();
    await expect(alert()).resolves.toContain('since must be an RFC 3339 date and time with a time zone');
    await expectUsable('events-refused');
  });

  it('overview: the sign-in chart with its table', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Overview' }).click();
    await expect(page.getByRole('img', { name: 'Sign-ins per hour, last 24 hours (UTC)' }).count()).resolves.toBe(1);
    await page.getByText('Sign-ins per hour as a table').click();
    await expect(page.locator('#sign-ins-table tbody tr').count()).resolves.toBe(24);
    await expectUsable('overview');
  });
});
