/**
 * The console's clients pages, as a browser without JavaScript (or a program) drives them: the
 * same operations and refusals as the API, shown beside the field they name; a confidential
 * client's secret once in #one-time-secret; a save over a change made meanwhile refused with the
 * current values; CSRF and roles enforced; every change an admin_change with actor console and
 * the administrator's sub. The console's own client is no row: the API can neither create, edit
 * nor list it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, ADMIN_SEED, adminChanges, call, isProblem, tokenFor } from '../e2e/admin-api-support.ts';
import type { Browser, Page } from '../helpers/browser-http.ts';
import { consoleUser, csrfOf, signInToConsole } from '../helpers/console.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';

const ADA = consoleUser('ada');
const GRACE = consoleUser('grace');
const AUDREY = consoleUser('audrey', ['idp-auditor']);

let app: InProcessApp;
let ada: { browser: Browser; page: Page };
beforeAll(async () => {
  app = await startInProcess({ seed: { ...ADMIN_SEED, users: [...ADMIN_SEED.users, ADA, GRACE, AUDREY] }, env: { LOG_LEVEL: 'info' } });
  ada = await signInToConsole(app.base, ADA);
});
afterAll(async () => {
  await app?.close();
});

const clientUrl = (id: string) => `${app.base}/admin/clients/${encodeURIComponent(id)}`;
const versionOf = (page: Page) => /name="version" value="(\d+)"/.exec(page.body)?.[1] ?? '';
const subOf = async (username: string) => (await app.sql<{ subject: string }>('SELECT subject FROM users WHERE username = $1', [username]))[0]?.subject;
const alertOf = (page: Page) => /role="alert"[^>]*>([^<]*)</.exec(page.body)?.[1]?.trim();

const NEW_CLIENT = {
  client_id: 'shop', display_name: 'The shop', enabled: 'true', grant_types: 'authorization_code\nrefresh_token',
  scopes: 'openid\nprofile\noffline_access', redirect_uris: 'https://shop.example/cb', post_logout_redirect_uris: '', cors_origins: '', access_token_lifetime: '600',
};

describe('console: clients', () => {
  it('creates a confidential client from the form and shows its secret once, recorded as the administrator\'s change', async () => {
    const form = await ada.browser.get(`${app.base}/admin/clients/new`);
    expect(form.status).toBe(200);
    for (const name of ['client_id', 'display_name', 'grant_types', 'scopes', 'redirect_uris', 'post_logout_redirect_uris', 'cors_origins', 'access_token_lifetime', 'require_consent', 'enabled', 'secret_expires_at']) {
      expect(form.body).toContain(`name="${name}"`);
    }
    expect(form.body).toMatch(/<textarea[^>]*name="redirect_uris"/);
    const created = await ada.browser.post(`${app.base}/admin/clients`, { ...NEW_CLIENT, csrf_token: csrfOf(form) });
    expect(created.status).toBe(201);
    const secret = /id="one-time-secret">([^<]+)</.exec(created.body)?.[1] ?? '';
    expect(secret.length).toBeGreaterThanOrEqual(43);
    const again = await ada.browser.get(clientUrl('shop'));
    expect(again.body).not.toContain(secret);
    expect(again.body).not.toContain('one-time-secret');
    const row = (await app.sql('SELECT display_name, grant_types, access_token_lifetime FROM clients WHERE client_id = $1', ['shop']))[0];
    expect(row).toStrictEqual({ display_name: 'The shop', grant_types: ['authorization_code', 'refresh_token'], access_token_lifetime: 600 });
    expect(adminChanges(app.logs())).toContainEqual(expect.objectContaining({ actor: 'console', admin_sub: await subOf('ada'), action: 'create', resource: 'client', resource_id: 'shop' }));
    expect(app.logs()).not.toContain(secret);
  });

  it('refuses a wrong field with the API\'s own words, beside the field, and writes nothing', async () => {
    const form = await ada.browser.get(`${app.base}/admin/clients/new`);
    const refused = await ada.browser.post(`${app.base}/admin/clients`, { ...NEW_CLIENT, client_id: 'broken', redirect_uris: 'https://ok.example/cb\nhttps://bad.example/cb#fragment', csrf_token: csrfOf(form) });
    expect(refused.status).toBe(400);
    const token = await tokenFor(app.base, 'automation', ADMIN_SECRET, 'admin_api');
    const api = await call(`${app.base}/admin/v1/clients`, 'POST', { token, body: { client_id: 'broken', redirect_uris: ['https://ok.example/cb', 'https://bad.example/cb#fragment'] } });
    const apiDetail = (api.body.errors as Array<{ pointer: string; detail: string }>).find((e) => e.pointer === '/redirect_uris/1')?.detail ?? 'none';
    const beside = /id="f-redirect_uris-error">([^<]*)</.exec(refused.body)?.[1] ?? '';
    expect(beside).toContain(apiDetail);
    expect(alertOf(refused)).toBeTruthy();
    expect(refused.body).toMatch(/name="redirect_uris"[^>]*aria-invalid="true"/);
    expect(await app.sql("SELECT 1 FROM clients WHERE client_id = 'broken'")).toStrictEqual([]);
  });

  it('lists and finds clients by id or name', async () => {
    const all = await ada.browser.get(`${app.base}/admin/clients`);
    expect(all.body).toContain('>web<');
    const found = await ada.browser.get(`${app.base}/admin/clients?q=web%20SHOP`);
    expect(found.body).toContain('>web<');
    expect(found.body).not.toContain('>automation<');
  });

  it('refuses the second of two administrators saving the same client, and shows the current values', async () => {
    const grace = await signInToConsole(app.base, GRACE);
    const adaPage = await ada.browser.get(clientUrl('web'));
    const gracePage = await grace.browser.get(clientUrl('web'));
    expect(versionOf(adaPage)).toBe(versionOf(gracePage));
    const common = { grant_types: 'authorization_code\nrefresh_token', scopes: 'openid\nprofile\noffline_access', redirect_uris: 'https://rp.test/cb', enabled: 'true', access_token_lifetime: '3600' };
    const saved = await ada.browser.post(clientUrl('web'), { ...common, display_name: 'Saved by Ada', csrf_token: csrfOf(adaPage), version: versionOf(adaPage) });
    expect(saved.status).toBe(200);
    const stale = await grace.browser.post(clientUrl('web'), { ...common, display_name: 'Saved by Grace', csrf_token: csrfOf(gracePage), version: versionOf(gracePage) });
    expect(stale.status).toBe(409);
    expect(alertOf(stale)).toMatch(/changed this since you opened it/);
    expect(stale.body).toContain('value="Saved by Ada"');
    expect((await app.sql("SELECT display_name FROM clients WHERE client_id = 'web'"))[0]?.display_name).toBe('Saved by Ada');
    // A change made with SQL meanwhile counts the same.
    const before = await ada.browser.get(clientUrl('web'));
    await app.sql("UPDATE clients SET display_name = 'Edited with SQL' WHERE client_id = 'web'");
    const overSql = await ada.browser.post(clientUrl('web'), { ...common, display_name: 'Over SQL', csrf_token: csrfOf(before), version: versionOf(before) });
    expect(overSql.status).toBe(409);
    expect(overSql.body).toContain('value="Edited with SQL"');
  });

  it('disables, enables, rotates the secret (saying how long the old one works) and removes only when the id is typed', async () => {
    let page = await ada.browser.get(clientUrl('shop'));
    page = await ada.browser.post(`${clientUrl('shop')}/disable`, { csrf_token: csrfOf(page), version: versionOf(page) });
    expect((await app.sql("SELECT enabled FROM clients WHERE client_id = 'shop'"))[0]?.enabled).toBe(false);
    expect(page.body).toContain('>Enable<');
    page = await ada.browser.post(`${clientUrl('shop')}/enable`, { csrf_token: csrfOf(page), version: versionOf(page) });
    expect((await app.sql("SELECT enabled FROM clients WHERE client_id = 'shop'"))[0]?.enabled).toBe(true);
    const rotated = await ada.browser.post(`${clientUrl('shop')}/secret`, { csrf_token: csrfOf(page), keep_old_for_seconds: '86400' });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatch(/id="one-time-secret">[^<]{43,}</);
    expect(rotated.body).toMatch(/old secret keeps working until/);
    const wrong = await ada.browser.post(`${clientUrl('shop')}/remove`, { csrf_token: csrfOf(rotated), version: versionOf(rotated), confirm_client_id: 'shoe' });
    expect(wrong.status).toBe(400);
    expect(wrong.body).toMatch(/id="f-confirm_client_id-error">type the client id shop/);
    const removed = await ada.browser.post(`${clientUrl('shop')}/remove`, { csrf_token: csrfOf(rotated), version: versionOf(wrong), confirm_client_id: 'shop' });
    expect(removed.status).toBe(200);
    expect(await app.sql("SELECT 1 FROM clients WHERE client_id = 'shop'")).toStrictEqual([]);
  });

  it('refuses a form without its CSRF token, and changes nothing', async () => {
    const page = await ada.browser.get(clientUrl('web'));
    const refused = await ada.browser.post(clientUrl('web'), { display_name: 'No token', version: versionOf(page) });
    expect(refused.status).toBe(403);
    expect(alertOf(refused)).toBeTruthy();
    expect((await app.sql("SELECT display_name FROM clients WHERE client_id = 'web'"))[0]?.display_name).not.toBe('No token');
  });

  it('lets an auditor read the clients but not change them', async () => {
    const audrey = await signInToConsole(app.base, AUDREY);
    const page = await audrey.browser.get(clientUrl('web'));
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('>Save<');
    const refused = await audrey.browser.post(clientUrl('web'), { display_name: 'By an auditor', csrf_token: csrfOf(page), version: '1' });
    expect(refused.status).toBe(403);
    expect((await app.sql("SELECT display_name FROM clients WHERE client_id = 'web'"))[0]?.display_name).not.toBe('By an auditor');
    expect((await audrey.browser.get(`${app.base}/admin/clients/new`)).status).toBe(403);
  });

  it('keeps the console\'s own client out of the table: not creatable, not editable, not listed', async () => {
    const token = await tokenFor(app.base, 'automation', ADMIN_SECRET, 'admin_api');
    const created = await call(`${app.base}/admin/v1/clients`, 'POST', { token, body: { client_id: 'idp-admin-console', redirect_uris: ['https://evil.example/cb'] } });
    expect(isProblem(created, 400)).toBe(true);
    expect(JSON.stringify(created.body)).toContain('reserved');
    expect(isProblem(await call(`${app.base}/admin/v1/clients/idp-admin-console`, 'GET', { token }), 404)).toBe(true);
    expect(isProblem(await call(`${app.base}/admin/v1/clients/idp-admin-console`, 'PATCH', { token, body: { display_name: 'x' }, headers: { 'if-match': '"1"' } }), 404)).toBe(true);
    const list = await call(`${app.base}/admin/v1/clients?limit=200`, 'GET', { token });
    expect((list.body.items as Array<{ client_id: string }>).map((c) => c.client_id)).not.toContain('idp-admin-console');
    await expect(app.sql("INSERT INTO clients (client_id, display_name) VALUES ('idp-admin-console', 'x')")).rejects.toThrow(/clients_client_id_not_reserved/);
  });
});
