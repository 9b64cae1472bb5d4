/**
 * The console's users pages: search, "Create user" under the password policy (its refusal beside
 * the field), a user's page whose buttons change exactly what they say (each an admin_change of
 * the console's administrator), "Send password reset" mailing the recovery code, the second
 * factors shown and reset, and the user's sessions and applications ended one or all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminChanges } from '../e2e/admin-api-support.ts';
import type { Browser, Page } from '../helpers/browser-http.ts';
import { consoleUser, csrfOf, signInToConsole } from '../helpers/console.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';

const ADA = consoleUser('ada');
const ZOE = consoleUser('zoe', ['support']);
const SEED = {
  api_scopes: [],
  clients: [{ client_id: 'web', client_secret: 'web-secret-0123456789abcdefghijklmnop', display_name: 'Web shop', grant_types: ['authorization_code'], scopes: ['openid'], redirect_uris: ['https://rp.test/cb'] }],
  users: [ADA, ZOE, { username: 'bob', password: 'the lighthouse keeper counts boats 42', given_name: 'Bob', family_name: 'Stone', email: 'bob@example.com', roles: [] }],
};

let app: InProcessApp;
let ada: { browser: Browser; page: Page };
beforeAll(async () => {
  app = await startInProcess({ seed: SEED, env: { LOG_LEVEL: 'info' } });
  ada = await signInToConsole(app.base, ADA);
});
afterAll(async () => {
  await app?.close();
});

const subOf = async (username: string) => (await app.sql<{ subject: string }>('SELECT subject FROM users WHERE username = $1', [username]))[0]?.subject ?? '';
const userUrl = async (username: string) => `${app.base}/admin/users/${encodeURIComponent(await subOf(username))}`;
const versionOf = (page: Page) => /name="version" value="(\d+)"/.exec(page.body)?.[1] ?? '';
const row = async (username: string) => (await app.sql('SELECT locked, must_change_password, must_enrol_mfa, roles, given_name FROM users WHERE username = $1', [username]))[0];
const press = async (username: string, action: string, extra: Record<string, string> = {}) => {
  const page = await ada.browser.get(await userUrl(username));
  return ada.browser.post(`${await userUrl(username)}/${action}`, { csrf_token: csrfOf(page), version: versionOf(page), ...extra });
};

describe('console: users', () => {
  it('finds users by the start of a username, email or name', async () => {
    const page = await ada.browser.get(`${app.base}/admin/users?q=STO`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('>bob<');
    expect(page.body).not.toContain('>zoe<');
  });

  it('creates a user, refusing a password the policy refuses beside the field', async () => {
    const form = await ada.browser.get(`${app.base}/admin/users/new`);
    const fields = { username: 'carol', given_name: 'Carol', family_name: 'Kline', email: 'carol@example.com', roles: 'idp-auditor\nbuyer', csrf_token: csrfOf(form) };
    const refused = await ada.browser.post(`${app.base}/admin/users`, { ...fields, password: 'short' });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatch(/id="f-password-error">[^<]+</);
    expect(refused.body).toContain('value="carol"');
    const created = await ada.browser.post(`${app.base}/admin/users`, { ...fields, password: 'a long and winding sentence 77' });
    expect(created.status).toBe(201);
    expect(await row('carol')).toMatchObject({ roles: ['idp-auditor', 'buyer'], given_name: 'Carol' });
    expect(adminChanges(app.logs())).toContainEqual(expect.objectContaining({ actor: 'console', admin_sub: await subOf('ada'), action: 'create', resource: 'user' }));
  });

  it('saves the profile and roles over the version shown', async () => {
    const page = await ada.browser.get(await userUrl('bob'));
    for (const label of ['Save', 'Lock', 'Require password change', 'Require second factor', 'Send password reset']) expect(page.body).toContain(`>${label}<`);
    const saved = await ada.browser.post(await userUrl('bob'), {
      csrf_token: csrfOf(page), version: versionOf(page), username: 'bob', given_name: 'Robert', family_name: 'Stone', email: 'bob@example.com', roles: 'buyer',
    });
    expect(saved.status).toBe(200);
    expect(await row('bob')).toMatchObject({ given_name: 'Robert', roles: ['buyer'] });
    const stale = await ada.browser.post(await userUrl('bob'), { csrf_token: csrfOf(page), version: versionOf(page), username: 'bob', given_name: 'Bobby', roles: '' });
    expect(stale.status).toBe(409);
    expect(stale.body).toContain('value="Robert"');
  });

  it('locks, unlocks, requires a password change and a second factor, each exactly', async () => {
    expect((await press('bob', 'lock')).status).toBe(200);
    expect(await row('bob')).toMatchObject({ locked: true });
    expect((await press('bob', 'unlock')).status).toBe(200);
    expect(await row('bob')).toMatchObject({ locked: false, must_change_password: false });
    await press('bob', 'require-password-change');
    expect(await row('bob')).toMatchObject({ must_change_password: true, must_enrol_mfa: false });
    await press('bob', 'require-second-factor');
    expect(await row('bob')).toMatchObject({ must_enrol_mfa: true });
    const bob = await subOf('bob');
    const changes = adminChanges(app.logs()).filter((c) => c.resource_id === bob && c.actor === 'console');
    expect(changes.map((c) => c.fields)).toEqual(expect.arrayContaining([['locked'], ['must_change_password'], ['must_enrol_mfa']]));
  });

  it('mails a password reset code to the user', async () => {
    const sent = await press('bob', 'password-reset');
    expect(sent.status).toBe(200);
    expect(sent.body).toContain('bob@example.com');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const mail = app.logs().split('\n').find((line) => line.includes('"mail":true') && line.includes('bob@example.com'));
    expect(mail).toMatch(/\b\d{4}-?\d{4}\b|\d{8}/);
  });

  it('shows the second factors by kind and name, and resets them', async () => {
    const page = await ada.browser.get(await userUrl('zoe'));
    expect(page.body).toMatch(/Authenticator app: /);
    const reset = await press('zoe', 'reset-second-factors');
    expect(reset.status).toBe(200);
    expect(await app.sql("SELECT 1 FROM user_factors f JOIN users u ON u.id = f.user_id WHERE u.username = 'zoe'")).toStrictEqual([]);
  });

  it('lists the user\'s sessions and applications, and ends one or all', async () => {
    const zoeId = (await app.sql<{ id: string }>("SELECT id FROM users WHERE username = 'zoe'"))[0]?.id;
    await app.sql("INSERT INTO consents (user_id, client_id, scopes) VALUES ($1, 'web', '{openid}')", [zoeId]);
    const grace = await signInToConsole(app.base, consoleUser('ada'));
    expect(grace.page.status).toBe(200);
    let page = await ada.browser.get(await userUrl('ada'));
    expect(page.body).toContain('>End all sessions<');
    page = await ada.browser.get(await userUrl('zoe'));
    expect(page.body).toContain('Web shop');
    const ended = await press('zoe', 'applications/end', { client_id: 'web' });
    expect(ended.status).toBe(200);
    expect(await app.sql('SELECT 1 FROM consents WHERE user_id = $1', [zoeId])).toStrictEqual([]);
    // Ending every session of Ada ends the second browser's console session too.
    const before = await ada.browser.get(await userUrl('ada'));
    await ada.browser.post(`${await userUrl('ada')}/sessions/end-all`, { csrf_token: csrfOf(before), version: versionOf(before) });
    expect((await grace.browser.get(`${app.base}/admin`)).status).toBe(303);
  });
});
