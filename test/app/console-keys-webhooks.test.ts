/**
 * The console's API scopes, signing keys and webhooks pages, driven as a browser without
 * JavaScript drives them (forms posted with their csrf_token and the row's version): each
 * change made through the API's operations, refused with the API's words beside its field, and
 * recorded with `actor` `console` and the administrator's `admin_sub`; the auditor reads and
 * cannot post; the webhooks role reaches only the webhooks; a retirement refused, then forced
 * once confirmed; a webhook's secret shown once; the delivery log a page at a time; redelivery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from '../helpers/browser-http.ts';
import { consoleUser, csrfOf, signInToConsole } from '../helpers/console.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';

const ADMIN = consoleUser('ada');
const AUDITOR = consoleUser('audrey', ['idp-auditor']);
const HOOKS = consoleUser('hook', ['idp-webhooks']);

let app: InProcessApp;
let admin: Browser;
let auditor: Browser;
let hooks: Browser;
let adminSubs: string[];

beforeAll(async () => {
  app = await startInProcess({ seed: { api_scopes: ['existing.read'], clients: [], users: [ADMIN, AUDITOR, HOOKS] }, env: { LOG_LEVEL: 'info' } });
  admin = (await signInToConsole(app.base, ADMIN)).browser;
  auditor = (await signInToConsole(app.base, AUDITOR)).browser;
  hooks = (await signInToConsole(app.base, HOOKS, { path: '/webhooks' })).browser;
  const [row] = await app.sql<{ id: string; subject: string }>("SELECT id::text AS id, subject FROM users WHERE username = 'ada'");
  adminSubs = [row?.id ?? '', row?.subject ?? ''];
});
afterAll(async () => {
  await app?.close();
});

const url = (path: string) => `${app.base}/admin${path}`;
const open = async (browser: Browser, path: string) => {
  const page = await browser.get(url(path));
  expect(page.status, page.body.slice(0, 400)).toBe(200);
  return page;
};
/** Posts a form of `page` (its csrf_token) with `fields`. */
const post = (browser: Browser, page: Page, path: string, fields: Record<string, string> = {}) => browser.post(url(path), { csrf_token: csrfOf(page), ...fields });
const alertOf = (page: Page) => decode(/role="alert"[^>]*>([^<]*)</.exec(page.body)?.[1] ?? '');
const fieldErrorOf = (page: Page, name: string) => decode(new RegExp(`id="f-${name}-error">([^<]*)<`).exec(page.body)?.[1] ?? '');
const secretOf = (page: Page) => /id="one-time-secret">([^<]*)</.exec(page.body)?.[1];
const versionIn = (page: Page, action: string) => new RegExp(`action="[^"]*${action}"[^>]*>(?:(?!</form>)[\\s\\S])*?name="version" value="(\\d+)"`).exec(page.body)?.[1] ?? '';
const decode = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The audit lines of `type` logged so far. */
const auditLines = (type: string) => app.logs().split('\n').filter((line) => line.includes(`"event":"${type}"`)).map((line) => JSON.parse(line) as Record<string, unknown>);

describe('/admin/api-scopes', () => {
  it('adds a scope, refuses a repeat and a malformed name beside the field with the API\'s words, and removes one at the version shown', async () => {
    const page = await open(admin, '/api-scopes');
    expect(page.body).toContain('existing.read');
    const added = await post(admin, page, '/api-scopes', { name: 'orders.read' });
    expect(added.status).toBe(201);
    expect(added.body).toContain('<code>orders.read</code>');
    expect(auditLines('admin_change')).toContainEqual(expect.objectContaining({ actor: 'console', action: 'create', resource: 'api_scope', resource_id: 'orders.read', admin_sub: expect.toBeOneOf(adminSubs) }));

    const again = await post(admin, added, '/api-scopes', { name: 'orders.read' });
    expect(again.status).toBe(409);
    expect(alertOf(again)).toBe('API scope orders.read already exists');
    expect(fieldErrorOf(again, 'name')).toBe('API scope orders.read already exists');
    const malformed = await post(admin, added, '/api-scopes', { name: 'orders read' });
    expect(malformed.status).toBe(400);
    expect(alertOf(malformed)).toMatch(/^scope "orders read": /);
    expect(malformed.body).toContain('value="orders read"');

    const version = versionIn(added, '/api-scopes/orders.read/remove');
    expect(version).not.toBe('');
    const stale = await post(admin, added, '/api-scopes/orders.read/remove', { version: String(Number(version) + 1) });
    expect(stale.status).toBe(409);
    expect(alertOf(stale)).toContain('Someone changed this since you opened it');
    const removed = await post(admin, added, '/api-scopes/orders.read/remove', { version });
    expect(removed.status).toBe(200);
    expect(removed.body).not.toContain('<code>orders.read</code>');
    expect(await app.sql("SELECT name FROM api_scopes WHERE name = 'orders.read'")).toEqual([]);
  });

  it('lets the auditor read the scopes and keys but not post to them (403, nothing changed)', async () => {
    const scopes = await open(auditor, '/api-scopes');
    expect(scopes.body).toContain('existing.read');
    expect(scopes.body).not.toContain('Add scope');
    const keys = await open(auditor, '/keys');
    expect(keys.body).not.toContain('>Rotate<');
    expect((await post(auditor, scopes, '/api-scopes', { name: 'auditor.write' })).status).toBe(403);
    expect((await post(auditor, keys, '/keys/rotate')).status).toBe(403);
    expect(await app.sql("SELECT name FROM api_scopes WHERE name = 'auditor.write'")).toEqual([]);
    expect((await app.sql("SELECT count(*)::int AS n FROM signing_keys"))[0]?.n).toBe(1);
  });

  it('refuses a form without the console session\'s csrf_token', async () => {
    const refused = await admin.post(url('/api-scopes'), { name: 'forged.write', csrf_token: 'forged' });
    expect(refused.status).toBe(403);
    expect(await app.sql("SELECT name FROM api_scopes WHERE name = 'forged.write'")).toEqual([]);
  });
});

describe('the webhooks role', () => {
  it('sees only the webhooks in the navigation and is refused every other page', async () => {
    const page = await open(hooks, '/webhooks');
    expect(page.body).toContain('Create endpoint');
    expect(page.body).not.toContain('>Signing keys<');
    for (const path of ['/api-scopes', '/keys', '/events']) {
      const refused = await hooks.get(url(path));
      expect(refused.status, path).toBe(403);
      expect(refused.body).not.toContain('existing.read');
    }
    expect((await post(hooks, page, '/keys/rotate')).status).toBe(403);
  });
});

describe('/admin/keys', () => {
  it('rotates, refuses retiring the current key and a previous key whose tokens may verify with the API\'s words, then retires it once forcing is confirmed', async () => {
    const page = await open(admin, '/keys');
    const [first] = await app.sql<{ kid: string }>("SELECT kid FROM signing_keys WHERE state = 'current'");
    expect(page.body).toContain(first?.kid);
    expect(page.body).toContain('Next rotation');

    const current = await post(admin, page, `/keys/${first?.kid}/retire`);
    expect(current.status).toBe(409);
    expect(alertOf(current)).toBe(`signing key ${first?.kid} is the current signer: rotate first (idp keys rotate), then retire it`);
    expect(current.body).not.toContain('Retire anyway');

    const rotated = await post(admin, page, '/keys/rotate');
    expect(rotated.status).toBe(200);
    const [second] = await app.sql<{ kid: string }>("SELECT kid FROM signing_keys WHERE state = 'current'");
    expect(second?.kid).not.toBe(first?.kid);
    expect(rotated.body).toContain(`Key ${second?.kid} signs from now on`);
    expect(auditLines('key_rotated')).toContainEqual(expect.objectContaining({ kid: second?.kid, actor: 'console', admin_sub: expect.toBeOneOf(adminSubs) }));

    const refused = await post(admin, rotated, `/keys/${first?.kid}/retire`);
    expect(refused.status).toBe(409);
    expect(alertOf(refused)).toMatch(new RegExp(`^signing key ${first?.kid} may still verify tokens until \\S+Z \\(it signed until \\S+Z, tokens live up to 3600 s, plus 300 s for clock skew\\): retire it after that, or use --force, which makes every token it signed invalid at once \\(relying parties must sign their users in again\\)$`));
    expect(refused.body).toContain('Retire anyway');
    expect((await app.sql<{ state: string }>('SELECT state FROM signing_keys WHERE kid = $1', [first?.kid]))[0]?.state).toBe('previous');

    const forced = await post(admin, refused, `/keys/${first?.kid}/retire`, { force: 'true' });
    expect(forced.status).toBe(200);
    expect(forced.body).toContain(`Key ${first?.kid} is retired. Tokens it signed`);
    expect((await app.sql<{ state: string }>('SELECT state FROM signing_keys WHERE kid = $1', [first?.kid]))[0]?.state).toBe('retired');
    expect(auditLines('key_retired')).toContainEqual(expect.objectContaining({ kid: first?.kid, actor: 'console', admin_sub: expect.toBeOneOf(adminSubs) }));
  });
});

describe('/admin/webhooks', () => {
  const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

  it('creates an endpoint with its secret shown once, and refuses a bad URL and an unknown event type beside their fields', async () => {
    const list = await open(hooks, '/webhooks');
    const bad = await post(hooks, list, '/webhooks', { url: 'ftp://example.com/hooks', event_types: 'sign_in\nno_such_event', description: 'Ops' });
    expect(bad.status).toBe(400);
    expect(fieldErrorOf(bad, 'url')).not.toBe('');
    expect(fieldErrorOf(bad, 'event_types')).toBe('event_types[1]: unknown event type "no_such_event" (an audit event\'s type, or *)');
    expect(bad.body).toContain('value="ftp://example.com/hooks"');

    const made = await post(hooks, list, '/webhooks', { url: 'http://127.0.0.1:9/ops', event_types: 'sign_in\r\nadmin_change\n', description: 'Ops' });
    expect(made.status).toBe(201);
    const secret = secretOf(made);
    expect(secret).toMatch(SECRET);
    const id = /Webhook endpoint <code>(ep_[\w-]+)<\/code>/.exec(made.body)?.[1] ?? '';
    expect(made.headers.get('location')).toBe(`/admin/webhooks/${id}`);
    const [row] = await app.sql<{ url: string; event_types: string[]; description: string }>('SELECT url, event_types, description FROM webhook_endpoints WHERE id = $1', [id]);
    expect(row).toEqual({ url: 'http://127.0.0.1:9/ops', event_types: ['sign_in', 'admin_change'], description: 'Ops' });
    const again = await open(hooks, `/webhooks/${id}`);
    expect(again.body).not.toContain(secret);
    expect(again.body).not.toContain('one-time-secret');
    expect((await open(hooks, '/webhooks')).body).toContain(`/admin/webhooks/${id}`);
    expect(auditLines('admin_change')).toContainEqual(expect.objectContaining({ actor: 'console', action: 'create', resource: 'webhook', resource_id: id, fields: ['url', 'event_types', 'enabled', 'description', 'secret'] }));
  });

  it('saves at the version shown, refuses a stale save with the current values, disables, enables and rotates the secret (shown once)', async () => {
    const made = await post(hooks, await open(hooks, '/webhooks'), '/webhooks', { url: 'http://127.0.0.1:9/edit', event_types: '*', description: 'Before' });
    const id = /Webhook endpoint <code>(ep_[\w-]+)<\/code>/.exec(made.body)?.[1] ?? '';
    const version = versionIn(made, `/webhooks/${id}`);
    const saved = await post(hooks, made, `/webhooks/${id}`, { version, url: 'http://127.0.0.1:9/edited', event_types: 'password_changed\nsign_in', description: 'After' });
    expect(saved.status).toBe(200);
    expect(saved.body).toContain('Saved.');
    expect(saved.body).toContain('password_changed\nsign_in</textarea>');
    const stale = await post(hooks, made, `/webhooks/${id}`, { version, url: 'http://127.0.0.1:9/lost', event_types: '*', description: 'Lost' });
    expect(stale.status).toBe(409);
    expect(alertOf(stale)).toContain('Someone changed this since you opened it');
    expect(stale.body).toContain('value="http://127.0.0.1:9/edited"');
    expect((await app.sql<{ url: string }>('SELECT url FROM webhook_endpoints WHERE id = $1', [id]))[0]?.url).toBe('http://127.0.0.1:9/edited');

    const disabled = await post(hooks, saved, `/webhooks/${id}/disable`, { version: versionIn(saved, `/webhooks/${id}/disable`) });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toContain('>Enable<');
    const enabled = await post(hooks, disabled, `/webhooks/${id}/enable`, { version: versionIn(disabled, `/webhooks/${id}/enable`) });
    expect(enabled.body).toContain('>Disable<');
    expect((await app.sql<{ enabled: boolean }>('SELECT enabled FROM webhook_endpoints WHERE id = $1', [id]))[0]?.enabled).toBe(true);

    const rotated = await post(hooks, enabled, `/webhooks/${id}/secret`, { version: versionIn(enabled, `/webhooks/${id}/secret`) });
    expect(rotated.status).toBe(200);
    expect(secretOf(rotated)).toMatch(SECRET);
    expect(rotated.body).toContain('The old secret keeps signing beside it until');
    expect((await open(hooks, `/webhooks/${id}`)).body).not.toContain(secretOf(rotated));
    const fields = auditLines('admin_change').filter((line) => line.resource_id === id).map((line) => line.fields);
    expect(fields).toEqual([['url', 'event_types', 'enabled', 'description', 'secret'], ['url', 'event_types', 'description'], ['enabled'], ['enabled'], ['secret']]);
  });

  it('removes an endpoint once its id is typed, at the version shown: refuses without the id and a stale version; recorded as the console\'s', async () => {
    const made = await post(hooks, await open(hooks, '/webhooks'), '/webhooks', { url: 'http://127.0.0.1:9/gone', event_types: '*', description: 'To remove' });
    const id = /Webhook endpoint <code>(ep_[\w-]+)<\/code>/.exec(made.body)?.[1] ?? '';
    const version = versionIn(made, `/webhooks/${id}/remove`);
    expect(version).not.toBe('');
    const count = async () => Number((await app.sql<{ n: string }>('SELECT count(*)::text AS n FROM webhook_endpoints WHERE id = $1', [id]))[0]?.n);

    const unconfirmed = await post(hooks, made, `/webhooks/${id}/remove`, { version, confirm_id: 'ep_other' });
    expect(unconfirmed.status).toBe(400);
    expect(fieldErrorOf(unconfirmed, 'confirm_id')).toBe(`type the endpoint id ${id} to remove it`);
    const saved = await post(hooks, made, `/webhooks/${id}`, { version, url: 'http://127.0.0.1:9/gone', event_types: '*', description: 'Changed meanwhile' });
    expect(saved.status).toBe(200);
    const stale = await post(hooks, made, `/webhooks/${id}/remove`, { version, confirm_id: id });
    expect(stale.status).toBe(409);
    expect(await count()).toBe(1);
    // The auditor may not remove it either.
    expect((await post(auditor, await open(auditor, `/webhooks/${id}`), `/webhooks/${id}/remove`, { version: versionIn(saved, `/webhooks/${id}/remove`), confirm_id: id })).status).toBe(403);
    expect(await count()).toBe(1);

    const removed = await post(hooks, saved, `/webhooks/${id}/remove`, { version: versionIn(saved, `/webhooks/${id}/remove`), confirm_id: id });
    expect(removed.status).toBe(200);
    expect(removed.body).toContain(`Webhook endpoint ${id} was removed.`);
    expect(await count()).toBe(0);
    expect((await hooks.get(url(`/webhooks/${id}`))).status).toBe(404);
    expect(auditLines('admin_change')).toContainEqual(expect.objectContaining({ actor: 'console', action: 'delete', resource: 'webhook', resource_id: id, admin_sub: expect.any(String) }));
  });

  it('sends a test event, shows the delivery log a page at a time, and redelivers a delivery; the auditor reads it without the buttons', async () => {
    const made = await post(hooks, await open(hooks, '/webhooks'), '/webhooks', { url: 'http://127.0.0.1:9/log', event_types: '*', description: 'Log' });
    const id = /Webhook endpoint <code>(ep_[\w-]+)<\/code>/.exec(made.body)?.[1] ?? '';
    const sent = await post(hooks, made, `/webhooks/${id}/test`);
    expect(sent.status).toBe(202);
    expect(sent.body).toContain('A webhook.test event');
    const [delivery] = await app.sql<{ id: string }>('SELECT id::text AS id FROM webhook_deliveries WHERE endpoint_id = $1', [id]);
    expect(delivery).toBeDefined();
    // As the delivery worker leaves failed attempts: thirty of them, so the log has two pages.
    await app.sql('DELETE FROM webhook_attempts WHERE delivery_id = $1::bigint', [delivery?.id]);
    await app.sql(`INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status)
      SELECT $1::bigint, n, timestamptz '2026-11-27 10:00:00+00' + n * interval '1 minute', 40, 503 FROM generate_series(1, 30) AS n`, [delivery?.id]);
    await app.sql("UPDATE webhook_deliveries SET state = 'failed', attempts = 30, step = 9, next_attempt_at = NULL WHERE id = $1::bigint", [delivery?.id]);

    const first = await open(hooks, `/webhooks/${id}`);
    expect(first.body.match(/>Redeliver</g)).toHaveLength(25);
    expect(first.body).toContain('2026-11-27T10:30:00.000Z');
    expect(first.body).toContain('HTTP 503');
    const next = /href="([^"]*\?cursor=[^"#]*)#log-heading">Older attempts</.exec(first.body)?.[1] ?? '';
    expect(next).not.toBe('');
    const second = await open(hooks, next.replace('/admin', ''));
    expect(second.body.match(/>Redeliver</g)).toHaveLength(5);
    expect(second.body).toContain('2026-11-27T10:01:00.000Z');
    expect(second.body).not.toContain('2026-11-27T10:30:00.000Z');
    expect(second.body).not.toContain('Older attempts');

    const read = await open(auditor, `/webhooks/${id}`);
    expect(read.body).toContain('HTTP 503');
    expect(read.body).not.toContain('>Redeliver<');
    expect((await post(auditor, read, `/webhooks/${id}/deliveries/${delivery?.id}/redeliver`)).status).toBe(403);

    const again = await post(hooks, first, `/webhooks/${id}/deliveries/${delivery?.id}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body).toContain(`Delivery ${delivery?.id} is due again now`);
    const [row] = await app.sql('SELECT state, step, next_attempt_at <= now() AS due FROM webhook_deliveries WHERE id = $1::bigint', [delivery?.id]);
    expect(row).toEqual({ state: 'pending', step: 0, due: true });
    const unknown = await post(hooks, first, `/webhooks/${id}/deliveries/999999/redeliver`);
    expect(unknown.status).toBe(404);
    expect(alertOf(unknown)).toBe(`no delivery 999999 of webhook endpoint ${id}`);
  });
});
