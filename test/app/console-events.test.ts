/**
 * The console's audit log (/admin/events) and the overview's sign-in chart, driven over HTTP:
 * events newest first, a page at a time with the filters kept, filtered by type, user, client
 * and time with the API's one reading of the filters (a malformed time refused beside its
 * field), read by the auditor, not by the webhooks role; sign-ins of the last 24 hours counted
 * per hour by result, drawn as SVG with the numbers as a table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from '../helpers/browser-http.ts';
import { consoleUser, signInToConsole } from '../helpers/console.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';

const ADMIN = consoleUser('ada');
const AUDITOR = consoleUser('audrey', ['idp-auditor']);
const HOOKS = consoleUser('hook', ['idp-webhooks']);

let app: InProcessApp;
let admin: Browser;
let auditor: Browser;
let hooks: Browser;
const HOUR = 3600_000;
/** The start of the hour two hours before now: the seeded sign-ins fall in it. */
const twoHoursAgo = new Date(Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR);

beforeAll(async () => {
  app = await startInProcess({ seed: { api_scopes: [], clients: [], users: [ADMIN, AUDITOR, HOOKS] } });
  // 60 sign-ins of u-1 at web, a minute apart from 10:00 on 2026-11-20, and 3 admin changes of other users.
  await app.sql(`INSERT INTO events (id, type, occurred_at, data)
    SELECT 'evt_seed_' || lpad(i::text, 3, '0'), 'sign_in', timestamptz '2026-11-20 10:00:00+00' + i * interval '1 minute',
      jsonb_build_object('result', CASE WHEN i % 3 = 0 THEN 'failure' ELSE 'success' END, 'username', 'uma', 'user_id', 'u-1', 'client_id', 'web', 'n', i)
    FROM generate_series(1, 60) AS i`);
  await app.sql(`INSERT INTO events (id, type, occurred_at, data)
    SELECT 'evt_change_' || i, 'admin_change', timestamptz '2026-11-20 12:00:00+00' + i * interval '1 minute',
      jsonb_build_object('actor', 'cli', 'action', 'update', 'resource', 'user', 'resource_id', 'u-' || (i + 1), 'fields', jsonb_build_array('roles'))
    FROM generate_series(1, 3) AS i`);
  // The chart's hour: 4 successes, 2 failures, 1 throttled; a throttled one of 30 hours ago is outside the 24.
  await app.sql(`INSERT INTO events (id, type, occurred_at, data)
    SELECT 'evt_chart_' || i, 'sign_in', $1::timestamptz + i * interval '1 minute',
      jsonb_build_object('result', CASE WHEN i <= 4 THEN 'success' WHEN i <= 6 THEN 'failure' ELSE 'throttled' END, 'username', 'vic')
    FROM generate_series(1, 7) AS i`, [twoHoursAgo]);
  await app.sql(`INSERT INTO events (id, type, occurred_at, data) VALUES ('evt_chart_old', 'sign_in', now() - interval '30 hours', '{"result":"throttled","username":"vic"}')`);
  admin = (await signInToConsole(app.base, ADMIN)).browser;
  auditor = (await signInToConsole(app.base, AUDITOR)).browser;
  hooks = (await signInToConsole(app.base, HOOKS, { path: '/webhooks' })).browser;
});
afterAll(async () => {
  await app?.close();
});

const url = (path: string) => `${app.base}/admin${path}`;
const open = async (browser: Browser, path: string, status = 200) => {
  const page = await browser.get(url(path));
  expect(page.status, page.body.slice(0, 400)).toBe(status);
  return page;
};
const eventIds = (page: Page) => [...page.body.matchAll(/<span class="fine-print">(evt_[^<]+)<\/span>/g)].map((m) => m[1]);
const olderLink = (page: Page) => /href="\/admin(\/events\?[^"]*)">Older events</.exec(page.body)?.[1]?.replace(/&amp;/g, '&');

describe('/admin/events', () => {
  it('lists a user\'s sign-ins newest first, a page at a time, keeping the filters on the next page', async () => {
    const first = await open(admin, '/events?type=sign_in&user_id=u-1&since=&until=');
    const ids = eventIds(first);
    expect(ids).toHaveLength(50);
    expect(ids[0]).toBe('evt_seed_060');
    expect(ids[49]).toBe('evt_seed_011');
    expect(first.body).toContain('value="u-1"');
    expect(first.body).toContain('<option value="sign_in" selected>');
    const next = olderLink(first);
    expect(next).toContain('type=sign_in');
    expect(next).toContain('user_id=u-1');
    const second = await open(admin, next ?? '');
    expect(eventIds(second)).toEqual(Array.from({ length: 10 }, (_, i) => `evt_seed_${String(10 - i).padStart(3, '0')}`));
    expect(olderLink(second)).toBeUndefined();
  });

  it('filters by client and by time (since inclusive, until exclusive), and by several types', async () => {
    const window = await open(admin, '/events?client_id=web&since=2026-11-20T10:05:00Z&until=2026-11-20T10:08:00Z');
    expect(eventIds(window)).toEqual(['evt_seed_007', 'evt_seed_006', 'evt_seed_005']);
    const changes = await open(admin, '/events?type=admin_change&type=key_rotated&until=2026-11-21T00:00:00Z');
    expect(eventIds(changes)).toEqual(['evt_change_3', 'evt_change_2', 'evt_change_1']);
    expect(changes.body).toContain('<dt>resource_id</dt><dd>u-4</dd>');
    expect(changes.body).toContain('<dt>fields</dt><dd>[&quot;roles&quot;]</dd>');
    const nobody = await open(admin, '/events?user_id=no-such-user');
    expect(nobody.body).toContain('No events match these filters.');
  });

  it('refuses a time without a zone beside its field, with the API\'s words', async () => {
    const refused = await open(admin, '/events?since=2026-11-20T10:00', 400);
    expect(refused.body).toMatch(/role="alert"[^>]*>events: since must be an RFC 3339 date and time with a time zone/);
    expect(refused.body).toContain('id="f-since-error">must be an RFC 3339 date and time with a time zone (2026-11-29T10:00:00Z)<');
    expect(refused.body).toContain('value="2026-11-20T10:00"');
  });

  it('is read by the auditor, and not by the webhooks role', async () => {
    expect(eventIds(await open(auditor, '/events?type=admin_change&until=2026-11-21T00:00:00Z'))).toHaveLength(3);
    const refused = await open(hooks, '/events', 403);
    expect(refused.body).not.toContain('evt_');
  });
});

describe('the overview\'s sign-ins of the last 24 hours', () => {
  it('counts the audit log\'s sign-ins per hour by result, drawn as SVG with a title, a description and the numbers as a table', async () => {
    const page = await open(admin, '');
    const hour = twoHoursAgo.toISOString();
    const label = `${String(twoHoursAgo.getUTCHours()).padStart(2, '0')}:00`;
    expect(page.body).toContain(`<th scope="row"><time datetime="${hour}">${label}</time></th><td>4</td><td>2</td><td>1</td>`);
    expect(page.body.match(/<tr><th scope="row"><time/g)).toHaveLength(24);
    // The throttled one of 30 hours ago is outside the 24 hours; the seeded ones of 2026-11-20 too.
    expect(page.body).toContain('Throttled: 1</li>');
    expect(page.body).toMatch(/<svg viewBox="0 0 720 220" role="img" aria-labelledby="sign-ins-chart-title sign-ins-chart-desc"/);
    expect(page.body).toContain('<title id="sign-ins-chart-title">Sign-ins per hour, last 24 hours (UTC)</title>');
    expect(page.body).toMatch(/<desc id="sign-ins-chart-desc">\d+ successes, \d+ failures and 1 throttled over 24 hours/);
    expect(page.body.match(/<rect class="chart-throttled"/g)).toHaveLength(1);
    expect(page.body.match(/<rect class="chart-failure"/g)?.length).toBeGreaterThanOrEqual(1);
  });
});
