/**
 * The outbox and delivery claims on PostgreSQL and PGlite: an event is written only for
 * subscribed enabled endpoints, in the transaction of its change (rolled back with it); concurrent
 * claims from two connections never take the same delivery; a claimed delivery is not due again
 * until its lease ends; attempts that ended are recorded together; the retention purge takes deliveries and attempts with their events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDurableStore } from '../../src/store/sql/durable.ts';
import type { ClaimedAttempt, DeliveryNext } from '../../src/store/records.ts';
import type { DurableStore, OutboxEvent } from '../../src/store/types.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';

let counter = 0;
const event = (type = 'token_issued'): OutboxEvent => ({ id: `evt_t${++counter}`, type, occurredAt: new Date(), data: { client_id: 'c' } });
const endpoint = (id: string, eventTypes: string[], enabled = true) => ({ id, url: 'https://hooks.example.com/x', eventTypes, enabled, description: '', secretSealed: 'sealed' });
const limits = { total: 1000, perEndpoint: 1000, busy: new Map<string, number>(), leaseSeconds: 60 };

function outboxSuite(name: string, open: () => Promise<{ stores: DurableStore[]; close(): Promise<void> }>): void {
  describe(name, () => {
    let stores: DurableStore[];
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ stores, close } = await open());
      const [store] = stores as [DurableStore];
      await store.webhooks.create(endpoint('ep_tokens', ['token_issued']));
      await store.webhooks.create(endpoint('ep_all', ['*']));
      await store.webhooks.create(endpoint('ep_off', ['*'], false));
    });
    afterAll(async () => close());

    it('writes an event only with a delivery per enabled subscribed endpoint, and nothing without one', async () => {
      const [store] = stores as [DurableStore];
      expect(await store.outbox.append(event('token_issued'))).toBe(2);
      expect(await store.outbox.append(event('sign_in'))).toBe(1);
      expect((await store.outbox.appendMany([event('token_issued'), event('logout')])).deliveries).toBe(3);
      expect(await store.webhooks.update('ep_all', { enabled: false })).toBeDefined();
      expect(await store.outbox.append(event('sign_in'))).toBe(0);
      expect(await store.outbox.append(event('sign_in'), 'ep_off')).toBe(1);
      expect((await store.webhooks.subscribedTypes()).sort()).toStrictEqual(['token_issued']);
      await store.webhooks.update('ep_all', { enabled: true });
    });

    it('rolls an event back with the transaction of its change', async () => {
      const [store] = stores as [DurableStore];
      const lost = event('admin_change');
      await expect(store.transaction(async (tx) => {
        await tx.apiScopes.add('rolled.back');
        await tx.outbox.append(lost);
        throw new Error('the change fails');
      })).rejects.toThrow('the change fails');
      expect(await store.apiScopes.list()).not.toContain('rolled.back');
      expect((await store.webhooks.attempts('ep_all', 200)).some((a) => a.eventId === lost.id)).toBe(false);
      const claimed = await store.webhooks.claim(limits);
      expect(claimed.some((c) => c.event.id === lost.id)).toBe(false);
    });

    it('never hands one delivery to two concurrent claimers, and holds a claimed one for its lease', async () => {
      const [store] = stores as [DurableStore];
      await store.outbox.appendMany(Array.from({ length: 100 }, () => event('token_issued')));
      const batches = await Promise.all(stores.flatMap((s) => [1, 2, 3].map(() => s.webhooks.claim({ ...limits, total: 30 }))));
      const taken: ClaimedAttempt[] = batches.flat();
      const keys = taken.map((c) => c.deliveryId);
      expect(new Set(keys).size).toBe(keys.length);
      expect(taken.every((c) => c.attempt === 1)).toBe(true);
      const rest = await store.webhooks.claim(limits);
      expect(rest.filter((c) => keys.includes(c.deliveryId))).toStrictEqual([]);
      expect(await store.webhooks.claim(limits)).toStrictEqual([]);
      expect((await store.webhooks.backlog()).pending).toBeGreaterThanOrEqual(200);
    });

    it('claims at most so many per endpoint, counting those in flight', async () => {
      const [store] = stores as [DurableStore];
      await store.outbox.appendMany(Array.from({ length: 10 }, () => event('token_issued')));
      const claimed = await store.webhooks.claim({ ...limits, perEndpoint: 3, busy: new Map([['ep_all', 1]]) });
      expect(claimed.filter((c) => c.endpoint.id === 'ep_tokens')).toHaveLength(3);
      expect(claimed.filter((c) => c.endpoint.id === 'ep_all')).toHaveLength(2);
    });

    it('writes the first attempts of a batch claimed within the writer\'s room, and leaves the rest due to others', async () => {
      const [store, other = store] = stores as [DurableStore, DurableStore?];
      await store.webhooks.claim(limits);
      const written = Array.from({ length: 6 }, () => event('token_issued'));
      // ep_tokens has 2 in flight of 4: room for 2 there; 3 in all.
      const { deliveries, claimed } = await store.outbox.appendMany(written, { total: 3, perEndpoint: 4, busy: new Map([['ep_tokens', 2]]), leaseSeconds: 60 });
      expect(deliveries).toBe(12);
      expect(claimed.map((c) => [c.event.id, c.endpoint.id, c.attempt, c.step])).toStrictEqual([
        [written[0]?.id, 'ep_all', 1, 0], [written[0]?.id, 'ep_tokens', 1, 0], [written[1]?.id, 'ep_all', 1, 0],
      ]);
      expect(JSON.parse((claimed[0] as ClaimedAttempt).event.dataJson)).toStrictEqual(written[0]?.data);
      expect((claimed[0] as ClaimedAttempt).event.occurredAt.getTime()).toBe(written[0]?.occurredAt.getTime());
      expect(claimed[0]?.endpoint).toMatchObject({ url: 'https://hooks.example.com/x', secretSealed: 'sealed' });
      // Claimed as written: another claimer gets the other 9, and none of these (under their lease).
      const rest = await other.webhooks.claim(limits);
      expect(rest).toHaveLength(9);
      expect(rest.some((r) => claimed.some((c) => c.deliveryId === r.deliveryId))).toBe(false);
      // Their first attempts are in the log, started.
      const log = await store.webhooks.attempts('ep_all', 500);
      expect(log.filter((l) => claimed.some((c) => c.deliveryId === l.deliveryId)).map((l) => [l.attempt, l.durationMs, l.state])).toStrictEqual([[1, null, 'pending'], [1, null, 'pending']]);
    });

    it('records attempts that ended in one call: each its result, the endpoint by the last, a late answer nothing more', async () => {
      const [store] = stores as [DurableStore];
      const written = [1, 2, 3].map((n) => ({ ...event('sign_in'), data: { client_id: 'c', n, quoted: 'a "b" é' } }));
      await store.outbox.appendMany(written);
      const claimed = (await store.webhooks.claim(limits)).filter((c) => written.some((w) => w.id === c.event.id));
      const [a, b, c] = written.map((w) => claimed.find((x) => x.event.id === w.id) as ClaimedAttempt);
      expect(JSON.parse((a as ClaimedAttempt).event.dataJson)).toStrictEqual(written[0]?.data);
      const ended = (x: ClaimedAttempt | undefined, status: number, next: DeliveryNext) =>
        ({ deliveryId: (x as ClaimedAttempt).deliveryId, attempt: (x as ClaimedAttempt).attempt, endpointId: 'ep_all', outcome: { status, error: status < 300 ? null : 'status', durationMs: status }, next });
      await store.webhooks.finish([ended(b, 500, { state: 'pending', retryInSeconds: 0 }), ended(c, 410, { state: 'failed' }), ended(a, 204, { state: 'succeeded' })]);
      expect((await store.webhooks.get('ep_all'))?.failingSince).toBeNull();
      const log = await store.webhooks.attempts('ep_all', 500);
      const of = (x: ClaimedAttempt | undefined) => log.find((l) => l.deliveryId === x?.deliveryId);
      expect([of(a), of(b), of(c)].map((l) => [l?.status, l?.durationMs, l?.state])).toStrictEqual([[204, 204, 'succeeded'], [500, 500, 'pending'], [410, 410, 'failed']]);
      const again = (await store.webhooks.claim(limits)).find((x) => x.deliveryId === b?.deliveryId);
      expect(again?.attempt).toBe(2);
      // The first attempt's answer comes late: it is logged, and the delivery (claimed again) stays as it is.
      await store.webhooks.finish([ended(b, 200, { state: 'succeeded' }), ended(again, 503, { state: 'pending', retryInSeconds: 60 })]);
      expect((await store.webhooks.attempts('ep_all', 500)).filter((l) => l.deliveryId === b?.deliveryId).map((l) => [l.attempt, l.status, l.state]))
        .toStrictEqual([[2, 503, 'pending'], [1, 200, 'pending']]);
      expect((await store.webhooks.get('ep_all'))?.failingSince).toBeInstanceOf(Date);
    });

    it('deletes events past their retention with their deliveries', async () => {
      const [store] = stores as [DurableStore];
      expect(await store.auditLog.purge({ before: new Date(Date.now() + 60_000) }, 10_000)).toBeGreaterThan(100);
      expect(await store.webhooks.backlog()).toStrictEqual({ pending: 0, oldestAgeSeconds: 0 });
      expect(await store.webhooks.attempts('ep_tokens', 200)).toStrictEqual([]);
    });
  });
}

describe.runIf(postgresAvailable)('on PostgreSQL', () => {
  let db: TestDatabase;
  outboxSuite('the outbox', async () => {
    db = await createTestDatabase();
    const stores = await Promise.all([1, 2].map(() => openDurableStore({ databaseUrl: db.url })));
    await (stores[0] as DurableStore).migrate();
    return {
      stores,
      async close() {
        for (const s of stores) await s.close();
        await db.drop();
      },
    };
  });
});

describe('on PGlite', () => {
  outboxSuite('the outbox', async () => {
    const store = await openDurableStore({});
    await store.migrate();
    return { stores: [store], close: () => store.close() };
  });
});
