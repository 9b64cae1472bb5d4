/**
 * A passkey whose credential id another user registered already (an authenticator that answers
 * with a credential id that is not new, or a forged answer) is refused with a clear line on the
 * account page, never a server error; the stored passkey stays its owner's alone. Chromium with a
 * virtual authenticator, on PostgreSQL; the other user's row is written as the request goes out.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGISTERED_ALREADY } from '../../src/factors/passkeys.ts';
import { chromiumAvailable, launchChromium } from '../helpers/chromium.ts';
import { freePort, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import { PASSWORD, passkeyPage } from './passkey-support.ts';

const chromiumReady = chromiumAvailable('the taken passkey suite');

describe.runIf(chromiumReady && postgresAvailable)('a passkey registered to another user already', () => {
  let db: TestDatabase;
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let base = '';

  beforeAll(async () => {
    db = await createTestDatabase();
    const port = await freePort();
    base = `http://localhost:${port}`;
    const env = { DATABASE_URL: db.url, IDP_SECRET: 'b8'.repeat(32), IDP_BASE_URL: base };
    await seedWith({ api_scopes: [], clients: [], users: [{ username: 'ada', password: PASSWORD }, { username: 'bob', password: PASSWORD }] }, env);
    server = await startServer(env, undefined, { port });
    browser = await launchChromium();
    ({ page } = await passkeyPage(browser));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await db?.drop();
  });

  it('refuses it on the account page with a clear line, and keeps the stored one its owner\'s', async () => {
    await page.goto(`${base}/account`);
    await page.getByLabel('Username', { exact: true }).fill('bob');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
    // As bob's browser sends the new credential, ada holds a passkey with its id already.
    let credentialId = '';
    await page.route(`${base}/account/passkeys`, async (route) => {
      const response = JSON.parse(new URLSearchParams(route.request().postData() ?? '').get('passkey_response') ?? '{}') as { id?: string };
      credentialId = response.id ?? '';
      await runSql(db.url, `INSERT INTO user_factors (user_id, kind, name, credential_id, public_key, sign_count)
        SELECT id, 'passkey', 'Ada''s key', $1, 'cHVibGlj', 0 FROM users WHERE username = 'ada'`, [credentialId]);
      await route.continue();
    });
    await page.getByLabel('Name of the passkey', { exact: true }).fill('Bob laptop');
    const answer = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/account/passkeys');
    await page.getByRole('button', { name: 'Add a passkey', exact: true }).click();
    expect((await answer).status()).toBeLessThan(500);
    await page.getByText(REGISTERED_ALREADY).waitFor();
    expect(credentialId).not.toBe('');
    const owners = await runSql<{ username: string; name: string }>(db.url, `SELECT u.username, f.name FROM user_factors f JOIN users u ON u.id = f.user_id WHERE f.kind = 'passkey'`);
    expect(owners).toStrictEqual([{ username: 'ada', name: 'Ada\'s key' }]);
    expect(server.output()).not.toMatch(/"level":50/);
  });
});
