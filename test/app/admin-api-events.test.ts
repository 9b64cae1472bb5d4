/**
 * The audit log through the administration API, in process: a change's admin_change is there as
 * soon as its answer is, a sign-in failure soon after, token_issued only when not excluded; the
 * filters and the keyset pages (stable while events arrive); who may read it; and with
 * IDP_AUDIT_RETENTION=0, nothing kept for its own sake while webhooks still get their events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, ADMIN_SEED, ALICE, HOOKS_SECRET, READER_SECRET, SERVICE_SECRET, call, isProblem, tokenFor } from '../e2e/admin-api-support.ts';
import { startInProcess } from '../helpers/in-process.ts';
import { Browser, beginAuthorization, expectSignInPage, submitSignIn } from '../helpers/relying-party.ts';
import { waitUntil } from '../helpers/waits.ts';

interface EventItem { id: string; type: string; occurred_at: string; data: Record<string, unknown> }

async function started(env: Record<string, string> = {}) {
  const app = await startInProcess({ seed: ADMIN_SEED, env: { LOG_LEVEL: 'info', ...env } });
  const admin = await tokenFor(app.base, 'automation', ADMIN_SECRET, 'admin_api');
  const events = async (query = '', token = admin) => call(`${app.base}/admin/v1/events${query}`, 'GET', { token });
  const items = async (query = '') => {
    const answer = await events(query);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.items as EventItem[];
  };
  const createUser = async (username: string) => {
    const made = await call(`${app.base}/admin/v1/users`, 'POST', { token: admin, body: { username, password: 'a long enough password 4711' } });
    expect(made.status).toBe(201);
    return made.body.sub as string;
  };
  return { app, admin, events, items, createUser };
}

/** A wrong password on the sign-in page of the web client. */
async function failSignIn(base: string): Promise<void> {
  const browser = new Browser();
  const { page } = await beginAuthorization(browser, base, 'web', 'https://rp.test/cb', { scope: 'openid' });
  expectSignInPage(page);
  await submitSignIn(browser, page, { username: ALICE.username, password: 'not her password' });
}

describe('the audit log: GET /admin/v1/events', () => {
  let setup: Awaited<ReturnType<typeof started>>;
  beforeAll(async () => {
    setup = await started();
  });
  afterAll(async () => {
    await setup?.app.close();
  });

  it('holds an API change\'s admin_change as soon as the change is answered, with the webhook id of the event', async () => {
    const sub = await setup.createUser('ada');
    const [latest] = await setup.items('?type=admin_change&limit=1');
    expect(latest).toMatchObject({ type: 'admin_change', data: { actor: 'api', client_id: 'automation', action: 'create', resource: 'user', resource_id: sub } });
    expect(latest?.id).toMatch(/^evt_[A-Za-z0-9_-]{22}$/);
    expect(Date.parse(latest?.occurred_at ?? '')).toBeGreaterThan(Date.now() - 60_000);
    // A change to a user is an event about that user.
    expect((await setup.items(`?user_id=${encodeURIComponent(sub)}`)).map((e) => e.id)).toEqual([latest?.id]);
  });

  it('holds a failed sign-in soon after its request, and no token_issued (excluded by default)', async () => {
    await failSignIn(setup.app.base);
    const failure = await waitUntil('the failed sign-in in the audit log', async () =>
      (await setup.items('?type=sign_in')).find((e) => e.data.result === 'failure' && e.data.username === ALICE.username));
    expect(failure.data).not.toHaveProperty('password');
    await tokenFor(setup.app.base, 'service', SERVICE_SECRET, 'orders.read');
    await setup.app.services.outboxSink.flush();
    expect(await setup.items('?type=token_issued')).toEqual([]);
    expect(await setup.app.sql("SELECT id FROM events WHERE type = 'token_issued'")).toEqual([]);
  });

  it('filters by type (repeated: any of them), client and time, newest first', async () => {
    await setup.createUser('bea');
    await failSignIn(setup.app.base);
    await waitUntil('two failed sign-ins', async () => (await setup.items('?type=sign_in')).length >= 2);
    const both = await setup.items('?type=sign_in&type=admin_change&limit=200');
    expect(new Set(both.map((e) => e.type))).toEqual(new Set(['sign_in', 'admin_change']));
    const times = both.map((e) => Date.parse(e.occurred_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const everything = await setup.items('?limit=200');
    expect(everything.length).toBeGreaterThan(both.length - 1);
    expect((await setup.items('?client_id=automation&limit=200')).every((e) => e.data.client_id === 'automation')).toBe(true);
    expect((await setup.items('?client_id=web&limit=200')).map((e) => e.type)).not.toContain('admin_change');
    const newest = both[0] as EventItem;
    const oldest = both.at(-1) as EventItem;
    expect(await setup.items(`?since=${encodeURIComponent(new Date(Date.parse(newest.occurred_at) + 1).toISOString())}`)).toEqual([]);
    const until = await setup.items(`?until=${encodeURIComponent(newest.occurred_at)}&type=sign_in&type=admin_change&limit=200`);
    expect(until.map((e) => e.id)).not.toContain(newest.id);
    expect(until.map((e) => e.id)).toContain(oldest.id);
    expect((await setup.items(`?since=${encodeURIComponent(oldest.occurred_at)}&type=sign_in&type=admin_change&limit=200`)).map((e) => e.id)).toContain(oldest.id);
  });

  it('refuses a time that is not RFC 3339, naming the parameter, and an unknown parameter', async () => {
    const yesterday = await setup.events('?since=yesterday');
    expect(isProblem(yesterday, 400)).toBe(true);
    expect(yesterday.body.errors).toEqual([expect.objectContaining({ parameter: 'since' })]);
    const noZone = await setup.events('?until=2026-11-29T10:00:00');
    expect(noZone.body.errors).toEqual([expect.objectContaining({ parameter: 'until' })]);
    expect(isProblem(await setup.events('?colour=red'), 400)).toBe(true);
    expect(isProblem(await setup.events('?limit=201'), 400)).toBe(true);
    expect(isProblem(await setup.events('?cursor=nonsense'), 400)).toBe(true);
  });

  it('pages newest first with a cursor that stays valid while new events arrive, the filters in the Link, and a total', async () => {
    for (const name of ['page1', 'page2', 'page3', 'page4', 'page5']) await setup.createUser(name);
    const query = '?type=admin_change&limit=2';
    const all = await setup.items('?type=admin_change&limit=200');
    const first = await setup.events(query);
    expect(first.body.items.map((e: EventItem) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    const link = first.headers.get('link') ?? '';
    expect(link).toMatch(/rel="next"$/);
    expect(link).toContain('type=admin_change');
    // Events written now are newer than the cursor: the next pages neither repeat nor skip.
    await setup.createUser('meanwhile');
    const seen = [...first.body.items.map((e: EventItem) => e.id)] as string[];
    let cursor = first.body.next_cursor as string | null;
    while (cursor !== null) {
      const page = await setup.events(`${query}&cursor=${cursor}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((e: EventItem) => e.id));
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual(all.map((e) => e.id));
    const counted = await setup.events('?type=admin_change&count=true&limit=1');
    expect(counted.body.total).toBe(all.length + 1);
  });

  it('is read with admin_api_readonly, and refused to a webhooks-only client', async () => {
    const reader = await tokenFor(setup.app.base, 'reader', READER_SECRET, 'admin_api_readonly');
    expect((await setup.events('', reader)).status).toBe(200);
    const hooks = await tokenFor(setup.app.base, 'hooks', HOOKS_SECRET, 'admin_console_webhooks');
    const refused = await setup.events('', hooks);
    expect(isProblem(refused, 403)).toBe(true);
    const operation = (await call(`${setup.app.base}/admin/v1/openapi.json`, 'GET')).body.paths['/events'].get;
    expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['type', 'user_id', 'client_id', 'since', 'until', 'limit', 'cursor', 'count']));
  });
});

describe('the audit log configured', () => {
  it('keeps token_issued when IDP_AUDIT_LOG_EXCLUDE is empty', async () => {
    const setup = await started({ IDP_AUDIT_LOG_EXCLUDE: '' });
    try {
      await tokenFor(setup.app.base, 'service', SERVICE_SECRET, 'orders.read');
      const issued = await waitUntil('token_issued in the audit log', async () => (await setup.items('?type=token_issued&client_id=service'))[0]);
      expect(issued.data).toMatchObject({ grant: 'client_credentials', client_id: 'service' });
    } finally {
      await setup.app.close();
    }
  });

  it('with IDP_AUDIT_RETENTION=0 writes no row for an unsubscribed event, while webhooks still get theirs', async () => {
    const setup = await started({ IDP_AUDIT_RETENTION: '0' });
    try {
      const hook = await call(`${setup.app.base}/admin/v1/webhooks`, 'POST', { token: setup.admin, body: { url: 'http://127.0.0.1:9/hook', event_types: ['admin_change'] } });
      expect(hook.status).toBe(201);
      await setup.app.services.subscriptions.ready();
      const sub = await setup.createUser('kept-for-webhooks');
      await failSignIn(setup.app.base);
      await setup.app.services.outboxSink.flush();
      const rows = await setup.app.sql<{ type: string; resource_id: string | null; deliveries: number }>(
        "SELECT e.type, e.data->>'resource_id' AS resource_id, (SELECT count(*)::int FROM webhook_deliveries AS d WHERE d.event_id = e.id) AS deliveries FROM events AS e");
      expect(rows.map((r) => r.type)).not.toContain('sign_in');
      expect(rows).toContainEqual({ type: 'admin_change', resource_id: sub, deliveries: 1 });
      // The log shows what webhooks keep, nothing more.
      expect((await setup.items('?type=sign_in'))).toEqual([]);
    } finally {
      await setup.app.close();
    }
  });
});
