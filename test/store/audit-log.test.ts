/**
 * The audit log on PostgreSQL and PGlite: the outbox keeps an audited event without a subscriber
 * and writes nothing for one neither audited nor subscribed; the log reads newest first under
 * each filter, a page at a time by a cursor that new events do not move; the maintenance purges a
 * backlog in several short batches and keeps what either retention keeps. Then, on PostgreSQL
 * with 100,000 events, every filter is served by an index (no sequential scan of events).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeExpiredEvents } from '../../src/maintenance.ts';
import type { AuditLogQuery, AuditLogRepository } from '../../src/store/contracts/audit-log.ts';
import { sqlAuditLog } from '../../src/store/sql/audit-log.ts';
import { openDurableStore } from '../../src/store/sql/durable.ts';
import type { DurableStore, OutboxEvent } from '../../src/store/types.ts';
import { expectNoSequentialScan, openPlanDatabase, type PlanDatabase } from '../helpers/query-plans.ts';
import { createTestDatabase, postgresAvailable } from '../helpers/services.ts';

const DAY = 86_400_000;
let counter = 0;
const event = (type: string, data: Record<string, unknown>, occurredAt = new Date()): OutboxEvent => ({ id: `evt_a${String(++counter).padStart(6, '0')}`, type, occurredAt, data });
const audits = (type: string) => type !== 'token_issued';

async function allPages(log: AuditLogRepository, query: Omit<AuditLogQuery, 'cursor'>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: AuditLogQuery['cursor'];
  for (;;) {
    const page = await log.list({ ...query, cursor });
    ids.push(...page.map((e) => e.id));
    if (page.length < query.limit) return ids;
    cursor = page.at(-1)?.cursor;
  }
}

function auditLogSuite(name: string, open: () => Promise<{ store: DurableStore; close(): Promise<void> }>): void {
  describe(name, () => {
    let store: DurableStore;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ store, close } = await open());
    });
    afterAll(async () => close());

    it('keeps audited events without a subscriber, in the change\'s transaction, and nothing of an unaudited unsubscribed type', async () => {
      const kept = event('sign_in', { result: 'failure', username: 'alice' });
      const excluded = event('token_issued', { client_id: 'web' });
      await store.outbox.appendMany([kept, excluded]);
      const change = event('admin_change', { actor: 'cli', action: 'create', resource: 'user', resource_id: 'sub-1' });
      await store.transaction(async (tx) => void (await tx.outbox.append(change)));
      const lost = event('admin_change', { actor: 'cli', action: 'remove', resource: 'user', resource_id: 'sub-1' });
      await expect(store.transaction(async (tx) => {
        await tx.outbox.append(lost);
        throw new Error('the change fails');
      })).rejects.toThrow('the change fails');
      const ids = (await store.auditLog.list({ limit: 50 })).map((e) => e.id);
      expect(ids).toEqual(expect.arrayContaining([kept.id, change.id]));
      expect(ids).not.toContain(excluded.id);
      expect(ids).not.toContain(lost.id);
      const [read] = await store.auditLog.list({ limit: 1, types: ['sign_in'] });
      expect(read).toMatchObject({ id: kept.id, type: 'sign_in', data: { result: 'failure', username: 'alice' } });
      expect(read?.occurredAt.getTime()).toBe(kept.occurredAt.getTime());
    });

    it('filters by types, user, client and time, newest first, and pages by a cursor that new events do not move', async () => {
      const base = Date.now() - 10 * DAY;
      const at = (minutes: number) => new Date(base + minutes * 60_000);
      const made = [
        event('sign_in', { result: 'success', username: 'bob', user_id: 'u-bob', client_id: 'web' }, at(1)),
        event('logout', { user_id: 'u-bob', client_id: 'web' }, at(2)),
        event('admin_change', { actor: 'api', client_id: 'automation', action: 'update', resource: 'user', resource_id: 'u-bob', fields: ['email'] }, at(3)),
        event('client_authentication_failed', { client_id: 'web', endpoint: 'token' }, at(4)),
        event('sign_in', { result: 'failure', username: 'carol', user_id: 'u-carol', client_id: 'mobile' }, at(5)),
        // Two events of one millisecond: the id orders them.
        event('logout', { user_id: 'u-carol', client_id: 'mobile' }, at(6)),
        event('logout', { user_id: 'u-carol', client_id: 'mobile' }, at(6)),
      ];
      await store.outbox.appendMany(made);
      const window = { since: at(0), until: at(7) };
      const ids = async (query: Omit<AuditLogQuery, 'limit'>) => (await store.auditLog.list({ ...window, ...query, limit: 100 })).map((e) => e.id);
      const newestFirst = (...indexes: number[]) => indexes.map((i) => made[i]?.id);
      expect(await ids({})).toEqual(newestFirst(6, 5, 4, 3, 2, 1, 0));
      expect(await ids({ types: ['logout', 'sign_in'] })).toEqual(newestFirst(6, 5, 4, 1, 0));
      expect(await ids({ userId: 'u-bob' })).toEqual(newestFirst(2, 1, 0));
      expect(await ids({ clientId: 'web' })).toEqual(newestFirst(3, 1, 0));
      expect(await ids({ clientId: 'mobile', types: ['logout'] })).toEqual(newestFirst(6, 5));
      expect(await ids({ since: at(2), until: at(4) })).toEqual(newestFirst(2, 1));
      expect(await store.auditLog.count({ ...window, userId: 'u-carol' })).toBe(3);
      expect(await store.auditLog.count({ ...window, types: ['no_such_type'] })).toBe(0);

      const first = await store.auditLog.list({ ...window, limit: 3 });
      expect(first.map((e) => e.id)).toEqual(newestFirst(6, 5, 4));
      const meanwhile = event('logout', { user_id: 'u-dan' }, at(6.5));
      await store.outbox.appendMany([meanwhile]);
      expect(await allPages(store.auditLog, { ...window, limit: 3 })).toEqual([meanwhile.id, ...newestFirst(6, 5, 4, 3, 2, 1, 0)]);
      const after = await store.auditLog.list({ ...window, limit: 3, cursor: first.at(-1)?.cursor });
      expect(after.map((e) => e.id)).toEqual(newestFirst(3, 2, 1));
    });

    it('purges a backlog in several batches, keeping what either retention keeps', async () => {
      const old = new Date(Date.now() - 100 * DAY);
      const backlog = Array.from({ length: 2500 }, (_, i) => event(i % 2 === 0 ? 'sign_in' : 'logout', { n: i }, old));
      for (let i = 0; i < backlog.length; i += 500) await store.outbox.appendMany(backlog.slice(i, i + 500));
      // token_issued kept for a webhook: past the webhooks' retention it goes, though within the log's.
      await store.webhooks.create({ id: 'ep_tokens', url: 'https://hooks.example.com/t', eventTypes: ['token_issued'], enabled: true, description: '', secretSealed: 'sealed' });
      const forWebhook = event('token_issued', { client_id: 'web' }, new Date(Date.now() - 30 * DAY));
      const recentForWebhook = event('token_issued', { client_id: 'web' }, new Date(Date.now() - DAY));
      const recent = event('sign_in', { result: 'success', username: 'recent' }, new Date(Date.now() - 80 * DAY));
      await store.outbox.appendMany([forWebhook, recentForWebhook, recent]);
      const config = { webhooks: { eventRetentionSeconds: 7 * 86400 }, auditLog: { retentionSeconds: 90 * 86400, excludedTypes: ['token_issued'] } };
      const purged = await purgeExpiredEvents(store, config as never, () => Date.now());
      expect(purged.deleted).toBe(2501);
      expect(purged.batches).toBeGreaterThanOrEqual(3);
      const left = await store.auditLog.list({ limit: 200, since: new Date(Date.now() - 200 * DAY), until: new Date(Date.now() - 0.5 * DAY) });
      expect(left.map((e) => e.id)).toEqual(expect.arrayContaining([recent.id, recentForWebhook.id]));
      expect(left.map((e) => e.id)).not.toContain(forWebhook.id);
      expect(await store.auditLog.count({ until: new Date(Date.now() - 90 * DAY) })).toBe(0);
      // With a retention of 0, everything past the webhooks' retention goes.
      expect((await purgeExpiredEvents(store, { ...config, auditLog: { retentionSeconds: 0, excludedTypes: [] } } as never, () => Date.now())).deleted).toBeGreaterThan(0);
      expect(await store.auditLog.count({ until: new Date(Date.now() - 7 * DAY) })).toBe(0);
      expect((await store.auditLog.list({ limit: 10, types: ['token_issued'] })).map((e) => e.id)).toContain(recentForWebhook.id);
    });
  });
}

auditLogSuite('audit log on PGlite', async () => {
  const store = await openDurableStore({ audits });
  await store.migrate();
  return { store, close: () => store.close() };
});

describe.runIf(postgresAvailable)('on PostgreSQL', () => {
  auditLogSuite('audit log on PostgreSQL', async () => {
    const db = await createTestDatabase();
    const store = await openDurableStore({ databaseUrl: db.url, audits });
    await store.migrate();
    return { store, close: async () => {
      await store.close();
      await db.drop();
    } };
  });
});

const EVENTS = 100_000;

describe.runIf(postgresAvailable)('audit log: every filter served by an index (100,000 events)', () => {
  let db: PlanDatabase;
  let log: AuditLogRepository;

  beforeAll(async () => {
    // 25 types, 5,000 users and 200 clients over 100 days.
    db = await openPlanDatabase([`
      INSERT INTO events (id, type, occurred_at, data)
      SELECT 'evt_' || lpad(i::text, 8, '0'), 'type_' || (i % 25), now() - (i || ' minutes')::interval * 1.44,
        jsonb_build_object('user_id', 'user-' || (i % 5000), 'client_id', 'client-' || (i % 200), 'n', i)
      FROM generate_series(1, ${EVENTS}) AS i`], ['events']);
    log = sqlAuditLog(db.kysely);
  }, 120_000);

  afterAll(async () => {
    await db?.close();
  });

  const recent = new Date(Date.now() - 2 * DAY);
  const shapes: Array<{ name: string; query: AuditLogQuery }> = [
    { name: 'newest first, first page', query: { limit: 51 } },
    { name: 'newest first, deep page (cursor)', query: { limit: 51, cursor: { micros: String((Date.now() - 90 * DAY) * 1000), id: 'evt_99999999' } } },
    { name: 'one type', query: { limit: 51, types: ['type_7'] } },
    { name: 'two types', query: { limit: 51, types: ['type_7', 'type_8'] } },
    { name: 'one user', query: { limit: 51, userId: 'user-42' } },
    { name: 'one client', query: { limit: 51, clientId: 'client-42' } },
    { name: 'since', query: { limit: 51, since: recent } },
    { name: 'a day, until', query: { limit: 51, since: new Date(Date.now() - 11 * DAY), until: new Date(Date.now() - 10 * DAY) } },
    { name: 'a user and a type', query: { limit: 51, userId: 'user-42', types: ['type_17'] } },
  ];

  it.each(shapes)('$name: no sequential scan of events', async ({ query }) => {
    const rows = await log.list(query);
    const times = rows.map((e) => e.occurredAt.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expectNoSequentialScan(await db.plan(db.lastStatement()), 'events');
  });
});
