/**
 * The behaviour every EphemeralStore backend must share, registered as one vitest `describe` per
 * backend; `ephemeral.test.ts` runs it on Redis and on the in-process map.
 *
 * Time: the backend supplies `advance(ms)`, which moves an injected clock (memory) or really
 * sleeps (Redis). Every TTL case lives in one test that lets about 1.1 s pass in total, and the
 * attempt locks in one of 1.3 s, so the Redis run sleeps only that long.
 *
 * The code store (`store.codes`) is part of the contract: single use under concurrent and
 * cross-instance redemptions, a replay before and after the first redemption recorded what it
 * issued, expiry, and codes kept apart.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { CODE_TTL_SECONDS } from '../../src/store/ephemeral/codes.ts';
import { waitUntil } from '../helpers/waits.ts';
import type { CodeRecord, IssuedFromCode } from '../../src/store/records.ts';
import { NAMESPACES, type AttemptRule, type EphemeralStore, type Namespace } from '../../src/store/types.ts';
import { indexContract } from './ephemeral-index-contract.ts';
import { purposesContract } from './ephemeral-purposes-contract.ts';

/** Whether every key took its attempt (`take` names the key that refused, if any). */
const tookAll = async (taking: Promise<string | undefined>) => (await taking) === undefined;
/** One key's attempt, through the store's several-key operations: true when it was taken. */
const takeAttempt = (store: EphemeralStore, key: string, rule: AttemptRule) => tookAll(store.attempts.take([{ key, rule }]));
const giveBackAttempt = (store: EphemeralStore, key: string) => store.attempts.giveBack([key]);

export interface OpenedEphemeralStore {
  store: EphemeralStore;
  /** Lets `ms` milliseconds pass as the store's TTLs see them. */
  advance(ms: number): Promise<void>;
  /** Closes the store and removes what the suite left behind. */
  cleanup(): Promise<void>;
  /** Another instance sharing the same data, when the backend is shared (Redis). The caller closes it. */
  openAnother?: () => Promise<EphemeralStore>;
}

const CONCURRENCY = 20;

/**
 * A namespace of this suite's own, not one of the service's: the store keeps any name apart,
 * and the cases must not see each other's values (a cast is the only way to name one).
 */
export function ns(name: string): Namespace {
  return name as Namespace;
}

function key(prefix = 'k'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

function codeRecord(): CodeRecord {
  return {
    clientId: key('client'), redirectUri: 'https://rp.example/cb', codeChallenge: key('challenge'), userId: key('user'),
    scopes: ['openid', 'offline_access'], authTime: 1_795_000_000, amr: ['pwd'], allowedScopes: ['openid', 'offline_access'], nonce: key('nonce'),
  };
}

function issuedFromCode(): IssuedFromCode {
  return { jti: key('jti'), accessExpiresAt: 1_795_000_600, familyId: key('family') };
}

export function ephemeralContract(name: string, open: () => Promise<OpenedEphemeralStore>): void {
  describe(`EphemeralStore contract: ${name}`, () => {
    let opened: OpenedEphemeralStore | undefined;
    let store: EphemeralStore;

    beforeAll(async () => {
      opened = await open();
      store = opened.store;
    });
    afterAll(async () => {
      await opened?.cleanup();
    });

    /**
     * Runs a case with a second instance on the same data, closed after. A backend with none
     * (the in-process store) skips the case and says why: which backend is open is known only
     * once beforeAll has run.
     */
    async function withAnotherInstance(ctx: TestContext, run: (other: EphemeralStore) => Promise<void>): Promise<void> {
      if (!opened?.openAnother) return ctx.skip('this backend has no second instance');
      const other = await opened.openAnother();
      try {
        await run(other);
      } finally {
        await other.close();
      }
    }

    it('says it is connected while it answers (a store with a connection, for the metrics)', async () => {
      await store.ping();
      if (store.connected) expect(store.connected()).toBe(true);
    });

    it('ping resolves', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    describe('set and get', () => {
      it('round-trip JSON values', async () => {
        const value = {
          text: 'zoë ✓ "quoted" \\ back',
          number: 12.5,
          negative: -3,
          flag: false,
          nothing: null,
          list: [1, 'two', { three: [3] }],
          nested: { deep: { deeper: ['x'] } },
        };
        const k = key();
        await store.set(ns('round'), k, value, 60);
        expect(await store.get(ns('round'), k)).toEqual(value);
        for (const scalar of ['plain string', 0, 42, true, false, null, [], {}]) {
          const sk = key('scalar');
          await store.set(ns('round'), sk, scalar, 60);
          expect(await store.get(ns('round'), sk)).toEqual(scalar);
        }
      });

      it('hand out copies: changing what get returned changes nothing stored', async () => {
        const k = key();
        const value = { roles: ['a'] };
        await store.set(ns('copies'), k, value, 60);
        value.roles.push('changed before reading');
        const read = await store.get<{ roles: string[] }>(ns('copies'), k);
        expect(read).toEqual({ roles: ['a'] });
        read!.roles.push('changed after reading');
        expect(await store.get(ns('copies'), k)).toEqual({ roles: ['a'] });
      });

      it('return undefined for a missing key, and keep namespaces apart', async () => {
        const k = key();
        expect(await store.get(ns('ns-one'), k)).toBeUndefined();
        await store.set(ns('ns-one'), k, 'one', 60);
        await store.set(ns('ns-two'), k, 'two', 60);
        expect(await store.get(ns('ns-one'), k)).toBe('one');
        expect(await store.get(ns('ns-two'), k)).toBe('two');
        expect(await store.get(ns('ns-three'), k)).toBeUndefined();
      });

      it('set replaces an existing value', async () => {
        const k = key();
        await store.set(ns('replace'), k, { v: 1 }, 60);
        await store.set(ns('replace'), k, { v: 2 }, 60);
        expect(await store.get(ns('replace'), k)).toEqual({ v: 2 });
      });
    });

    purposesContract(() => store, withAnotherInstance);
    indexContract(() => store, (ms) => opened!.advance(ms), withAnotherInstance);

    describe('deleteAndWrite', () => {
      const set = (k: string, value: unknown) => ({ op: 'set' as const, ns: ns('daw-out'), key: k, value, ttlSeconds: 60 });
      const del = (k: string) => ({ op: 'delete' as const, ns: ns('daw-out'), key: k });
      const read = (...keys: string[]) => Promise.all(keys.map((k) => store.get(ns('daw-out'), k)));

      it('deletes the value and makes only the writes of its outcome, in order', async () => {
        const [k, a, b, c, d] = [key(), key('a'), key('b'), key('c'), key('d')];
        await store.set(ns('daw-out'), c, 'old', 60);
        await store.set(ns('daw'), k, { interaction: 1 }, 60);
        const writes = { deleted: [set(a, { n: 1 }), del(c), set(a, { n: 2 })], missing: [set(b, 'missing'), del(d)] };
        expect(await store.deleteAndWrite(ns('daw'), k, writes)).toBe(true);
        expect(await read(a, b, c)).toEqual([{ n: 2 }, undefined, undefined]);
        expect(await store.get(ns('daw'), k), 'deleted').toBeUndefined();
        await store.set(ns('daw-out'), d, 'kept until missing', 60);
        expect(await store.deleteAndWrite(ns('daw'), k, writes), 'gone').toBe(false);
        expect(await read(a, b, d)).toEqual([{ n: 2 }, 'missing', undefined]);
        expect(await store.deleteAndWrite(ns('daw'), key('none'), { deleted: [], missing: [] })).toBe(false);
      });

      it(`deletes, and writes, for exactly one of ${CONCURRENCY} concurrent callers`, async () => {
        const k = key();
        await store.set(ns('daw'), k, 'once', 60);
        const marks = Array.from({ length: CONCURRENCY }, () => key('mark'));
        const results = await Promise.all(marks.map((mark) => store.deleteAndWrite(ns('daw'), k, { deleted: [set(mark, 'won')], missing: [] })));
        expect(results.filter(Boolean)).toHaveLength(1);
        const written = await read(...marks);
        expect(written.filter((v) => v !== undefined)).toEqual(['won']);
        expect(written.findIndex((v) => v !== undefined)).toBe(results.indexOf(true));
      });
    });

    describe('attempts: take and giveBack on one key', () => {
      // Locks far longer than any test: only the counting is seen here.
      const rule = { limit: 5, windowSeconds: 60, lockSeconds: 60, maxLockSeconds: 600 };
      const takeMany = (s: EphemeralStore, k: string, n: number) => Promise.all(Array.from({ length: n }, () => takeAttempt(s, k, rule)));
      const taken = (results: boolean[]) => results.filter(Boolean).length;

      it(`let exactly the limit of ${CONCURRENCY} concurrent attempts in; one given back lifts the lock for exactly one more`, async () => {
        const k = key();
        expect(taken(await takeMany(store, k, CONCURRENCY))).toBe(rule.limit);
        expect(await takeAttempt(store, k, rule)).toBe(false);
        await giveBackAttempt(store, k);
        expect(taken(await takeMany(store, k, CONCURRENCY))).toBe(1);
        expect(await takeAttempt(store, `${k}-other`, rule), 'another key counts on its own').toBe(true);
      });

      it('count attempts under the limit that are given back for nothing', async () => {
        const k = key();
        for (let i = 0; i < 3 * rule.limit; i++) {
          expect(await takeAttempt(store, k, rule)).toBe(true);
          await giveBackAttempt(store, k);
        }
        expect(taken(await takeMany(store, k, CONCURRENCY))).toBe(rule.limit);
      });

      it('a give back of a missing key is quiet and leaves nothing behind; delete forgets the count and the lock', async () => {
        const k = key();
        await giveBackAttempt(store, k);
        await giveBackAttempt(store, k);
        expect(taken(await takeMany(store, k, CONCURRENCY)), 'no credit from giving back what was not taken').toBe(rule.limit);
        await store.delete(NAMESPACES.signInAttempts, k);
        expect(taken(await takeMany(store, k, CONCURRENCY))).toBe(rule.limit);
      });

      it('let exactly the limit in across instances', (ctx) =>
        withAnotherInstance(ctx, async (other) => {
          const k = key();
          const [here, there] = await Promise.all([takeMany(store, k, CONCURRENCY), takeMany(other, k, CONCURRENCY)]);
          expect(taken([...here, ...there])).toBe(rule.limit);
          await giveBackAttempt(other, k);
          expect(await takeAttempt(store, k, rule)).toBe(true);
        }));

      it('lock for lockSeconds from the limit on, twice as long with each attempt after, at most maxLockSeconds', async () => {
        // About 1.3 s of waiting on Redis; the margins (100 ms and more) are for a busy machine.
        const timed = { limit: 1, windowSeconds: 60, lockSeconds: 0.2, maxLockSeconds: 0.4 };
        const k = key();
        const attempt = () => takeAttempt(store, k, timed);
        expect(await attempt(), 'first').toBe(true); // locked 200 ms
        expect(await attempt(), 'locked').toBe(false);
        await opened!.advance(300);
        expect(await attempt(), 'after 200 ms').toBe(true); // locked 400 ms
        await opened!.advance(300);
        expect(await attempt(), 'the second lock is twice as long').toBe(false);
        await opened!.advance(200);
        expect(await attempt(), 'after 400 ms').toBe(true); // 800 ms, capped at 400
        await opened!.advance(500);
        expect(await attempt(), 'the cap holds').toBe(true);
      });
    });

    describe('attempts: take and giveBack', () => {
      const rule = { limit: 3, windowSeconds: 60, lockSeconds: 60, maxLockSeconds: 600 };
      const both = (a: string, b: string) => [{ key: a, rule }, { key: b, rule }];
      const takenOf = (s: EphemeralStore, k: string) => Promise.all(Array.from({ length: CONCURRENCY }, () => takeAttempt(s, k, rule))).then((r) => r.filter(Boolean).length);

      it('take one attempt on every key at once, or none when one is locked', async () => {
        const [a, b] = [key('a'), key('b')];
        for (let i = 0; i < rule.limit; i++) expect(await takeAttempt(store, b, rule)).toBe(true);
        expect(await store.attempts.take(both(a, b)), 'b is locked').toBe(b);
        expect(await takenOf(store, a), 'nothing was counted on a').toBe(rule.limit);
        const [c, d] = [key('c'), key('d')];
        expect(await store.attempts.take(both(c, d))).toBeUndefined();
        expect(await takenOf(store, c), 'one counted on c').toBe(rule.limit - 1);
        expect(await takenOf(store, d), 'one counted on d').toBe(rule.limit - 1);
      });

      it(`let at most the limit of ${CONCURRENCY} concurrent attempts on two keys in; giving both back lifts the locks`, async () => {
        const [a, b] = [key('a'), key('b')];
        const results = await Promise.all(Array.from({ length: CONCURRENCY }, () => tookAll(store.attempts.take(both(a, b)))));
        // Exactly the limit where one script takes both; a cluster, key by key, may refuse one
        // more while another's attempt is being given back: never more than the limit.
        const taken = results.filter(Boolean).length;
        expect(taken).toBeGreaterThan(0);
        expect(taken).toBeLessThanOrEqual(rule.limit);
        for (let i = 0; i < taken; i++) await store.attempts.giveBack([a, b]);
        expect(await store.attempts.take(both(a, b)), 'the locks went with the attempts that set them').toBeUndefined();
        for (let i = 1; i < rule.limit; i++) expect(await store.attempts.take(both(a, b))).toBeUndefined();
        expect(await store.attempts.take(both(a, b))).toBe(a);
      });

      it('give back on each key, quietly where nothing was taken, and an empty list does nothing', async () => {
        const [a, b] = [key('a'), key('b')];
        expect(await store.attempts.take([{ key: a, rule }])).toBeUndefined();
        await store.attempts.giveBack([a, b]);
        await store.attempts.giveBack([]);
        expect(await takenOf(store, a), 'given back').toBe(rule.limit);
        expect(await takenOf(store, b), 'no credit from giving back what was not taken').toBe(rule.limit);
      });

      it('take names the first locked key in the order given, counting nothing; undefined when all were taken', async () => {
        const [a, b, c] = [key('a'), key('b'), key('c')];
        const three = [{ key: a, rule }, { key: b, rule }, { key: c, rule }];
        expect(await store.attempts.take(three)).toBeUndefined();
        for (let i = 1; i < rule.limit; i++) expect(await takeAttempt(store, c, rule)).toBe(true);
        expect(await store.attempts.take(three)).toBe(c);
        for (let i = 1; i < rule.limit; i++) expect(await takeAttempt(store, b, rule)).toBe(true);
        expect(await store.attempts.take(three), 'b comes before c').toBe(b);
        expect(await takenOf(store, a), 'one counted on a, by the first call only').toBe(rule.limit - 1);
      });
    });

    describe('delete', () => {
      it('removes a value, and is quiet about a missing one', async () => {
        const k = key();
        await store.set(ns('del'), k, 'v', 60);
        await store.set(ns('del'), `${k}-kept`, 'kept', 60);
        await store.delete(ns('del'), k);
        expect(await store.get(ns('del'), k)).toBeUndefined();
        expect(await store.get(ns('del'), `${k}-kept`)).toBe('kept');
        await expect(store.delete(ns('del'), key('missing'))).resolves.toBeUndefined();
      });
    });

    describe('write', () => {
      it('applies sets and deletes in order', async () => {
        const [a, b, c] = [key('a'), key('b'), key('c')];
        await store.set(ns('batch'), c, 'old', 60);
        await store.write([
          { op: 'set', ns: ns('batch'), key: a, value: { n: 1 }, ttlSeconds: 60 },
          { op: 'set', ns: ns('batch-other'), key: b, value: [2], ttlSeconds: 60 },
          { op: 'delete', ns: ns('batch'), key: c },
          { op: 'set', ns: ns('batch'), key: a, value: { n: 3 }, ttlSeconds: 60 },
        ]);
        expect(await Promise.all([store.get(ns('batch-other'), b), store.get(ns('batch'), a), store.get(ns('batch'), c), store.get(ns('batch'), b)]))
          .toEqual([[2], { n: 3 }, undefined, undefined]);
        await expect(store.write([])).resolves.toBeUndefined();
      });

      it('calls made in one tick without waiting are carried out in the order they were made', async () => {
        // On Redis they leave in one write: this is what that must keep.
        const k = key();
        const record = codeRecord();
        const { code, write } = store.codes.create(record);
        const calls = [
          store.get(ns('tick'), k),
          store.set(ns('tick'), k, 1, 60),
          store.rates.add(k, 1, 60),
          store.get(ns('tick'), k),
          store.codes.redeem(code),
          store.write([{ op: 'set', ns: ns('tick'), key: k, value: 2, ttlSeconds: 60 }, write]),
          store.codes.redeem(code),
          store.codes.redeem(code),
          store.get(ns('tick'), k),
          store.delete(ns('tick'), k),
          store.rates.add(k, 1, 60),
          store.get(ns('tick'), k),
        ];
        expect(await Promise.all(calls)).toEqual([
          undefined, undefined, 1, 1, { outcome: 'unknown' }, undefined, { outcome: 'redeemed', record }, { outcome: 'replayed', issued: undefined }, 2, undefined, 2, undefined,
        ]);
      });
    });

    describe('entries', () => {
      it('lists every live value of one namespace by key, and nothing of another', async () => {
        const listed = key('entries');
        const [a, b, c] = [key('a'), key('b'), key('c')] as [string, string, string];
        await store.set(ns(listed), a, { n: 1 }, 60);
        await store.set(ns(listed), b, 2, 60);
        await store.set(ns(listed), c, 3, 60);
        await store.delete(ns(listed), c);
        await store.set(ns(`${listed}-other`), a, 'other', 60);
        const found = await store.entries(ns(listed));
        expect(found).toHaveLength(2);
        expect(new Map(found)).toStrictEqual(new Map<string, unknown>([[a, { n: 1 }], [b, 2]]));
        expect(await store.entries(ns(key('empty')))).toStrictEqual([]);
      });
    });

    describe('publish and subscribe', () => {
      /** Subscribes and resolves once listening, with the messages heard from then on. */
      async function listen(on: EphemeralStore, channel: string) {
        const heard: string[] = [];
        const states: boolean[] = [];
        let stop = () => {};
        await new Promise<void>((resolve) => {
          stop = on.channels.subscribe(channel, {
            message: (m) => heard.push(m),
            listening: (l) => {
              states.push(l);
              if (l) resolve();
            },
          });
        });
        return { heard, states, stop };
      }
      // Messages arrive when they arrive: the assertion after the wait says what came.
      const until = (done: () => boolean) => waitUntil('the messages published', done, { intervalMs: 5 }).catch(() => undefined);

      it('delivers what is published on the channel, in order, to the publisher too, and stops when asked', async () => {
        const channel = key('chan');
        const a = await listen(store, channel);
        const other = await listen(store, `${channel}-other`);
        expect(a.states).toStrictEqual([true]);
        await store.channels.publish(channel, 'one');
        await store.channels.publish(channel, 'two');
        await until(() => a.heard.length === 2);
        expect(a.heard).toStrictEqual(['one', 'two']);
        a.stop();
        await store.channels.publish(channel, 'three');
        await store.channels.publish(`${channel}-other`, 'elsewhere');
        await until(() => other.heard.length === 1);
        expect(a.heard).toStrictEqual(['one', 'two']);
        expect(other.heard).toStrictEqual(['elsewhere']);
        other.stop();
      });

      it('keeps the order of messages published one after another, on whichever node they land', async () => {
        // A cluster forwards a PUBLISH between its nodes: published through whichever node, twenty
        // messages arrived out of order in every run.
        const channel = key('chan');
        const a = await listen(store, channel);
        const sent = Array.from({ length: 20 }, (_, i) => `m${i}`);
        for (const message of sent) await store.channels.publish(channel, message);
        await until(() => a.heard.length === sent.length);
        expect(a.heard).toStrictEqual(sent);
        a.stop();
      });

      it('reaches a subscriber on another instance', (ctx) =>
        withAnotherInstance(ctx, async (other) => {
          const channel = key('chan');
          const there = await listen(other, channel);
          await store.channels.publish(channel, 'across');
          await until(() => there.heard.length === 1);
          expect(there.heard).toStrictEqual(['across']);
          there.stop();
        }));
    });

    describe('codes', () => {
      /** A code whose record is stored, as the sign-in flow stores it (its write in a batch). */
      async function storedCode(record = codeRecord()): Promise<{ code: string; record: CodeRecord }> {
        const { code, write } = store.codes.create(record);
        await store.write([write]);
        return { code, record };
      }

      it('create returns a code and the write that keeps its record under its hash for five minutes', async () => {
        const record = codeRecord();
        const { code, write } = store.codes.create(record);
        expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(write).toMatchObject({ op: 'set', ns: NAMESPACES.code, value: record, ttlSeconds: CODE_TTL_SECONDS });
        expect(CODE_TTL_SECONDS).toBe(300);
        expect(write.key).not.toContain(code);
        expect(await store.codes.redeem(code), 'not redeemable before its write is sent').toEqual({ outcome: 'unknown' });
        await store.write([write]);
        expect(await store.codes.redeem(code)).toEqual({ outcome: 'redeemed', record });
      });

      it('redeem reports a code never issued as unknown', async () => {
        expect(await store.codes.redeem(key('never-issued'))).toEqual({ outcome: 'unknown' });
      });

      it(`of ${CONCURRENCY} concurrent redemptions exactly one redeems; the others are replays`, async () => {
        const { code, record } = await storedCode();
        const outcomes = await Promise.all(Array.from({ length: CONCURRENCY }, () => store.codes.redeem(code)));
        expect(outcomes.filter((o) => o.outcome === 'redeemed')).toEqual([{ outcome: 'redeemed', record }]);
        expect(outcomes.filter((o) => o.outcome === 'replayed')).toHaveLength(CONCURRENCY - 1);
      });

      it('redeems exactly once across instances', (ctx) =>
        withAnotherInstance(ctx, async (other) => {
          const { code } = await storedCode();
          const outcomes = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => (i % 2 ? other : store).codes.redeem(code)));
          expect(outcomes.filter((o) => o.outcome === 'redeemed')).toHaveLength(1);
          expect(outcomes.filter((o) => o.outcome === 'replayed')).toHaveLength(CONCURRENCY - 1);
        }));

      it('a replay after the first redemption recorded what it issued gets what it issued', async () => {
        const { code } = await storedCode();
        expect((await store.codes.redeem(code)).outcome).toBe('redeemed');
        const issued = issuedFromCode();
        expect(await store.codes.recordIssued(code, issued), 'no replay yet').toBe(false);
        expect(await store.codes.redeem(code)).toEqual({ outcome: 'replayed', issued });
        expect(await store.codes.redeem(code)).toEqual({ outcome: 'replayed', issued });
      });

      it('a replay while the first redemption is minting is reported to the first when it records what it issued', async () => {
        const { code } = await storedCode();
        expect((await store.codes.redeem(code)).outcome).toBe('redeemed');
        expect(await store.codes.redeem(code), 'nothing recorded yet').toEqual({ outcome: 'replayed', issued: undefined });
        const issued = issuedFromCode();
        expect(await store.codes.recordIssued(code, issued), 'the first learns of the replay').toBe(true);
        expect(await store.codes.redeem(code)).toEqual({ outcome: 'replayed', issued });
      });

      it('a replay on another instance while the first is minting is reported to the first', (ctx) =>
        withAnotherInstance(ctx, async (other) => {
          const { code } = await storedCode();
          expect((await store.codes.redeem(code)).outcome).toBe('redeemed');
          expect(await other.codes.redeem(code)).toEqual({ outcome: 'replayed', issued: undefined });
          expect(await store.codes.recordIssued(code, issuedFromCode())).toBe(true);
        }));

      it('a code of one record never yields another\'s, nor what another\'s redemption issued', async () => {
        const stored = await Promise.all(Array.from({ length: CONCURRENCY }, () => storedCode()));
        const outcomes = await Promise.all(stored.map(({ code }) => store.codes.redeem(code)));
        expect(outcomes).toEqual(stored.map(({ record }) => ({ outcome: 'redeemed', record })));
        const issued = stored.map(() => issuedFromCode());
        expect(await Promise.all(stored.map(({ code }, i) => store.codes.recordIssued(code, issued[i]!)))).toEqual(stored.map(() => false));
        const replays = await Promise.all(stored.map(({ code }) => store.codes.redeem(code)));
        expect(replays).toEqual(issued.map((i) => ({ outcome: 'replayed', issued: i })));
      });
    });

    describe('time to live', () => {
      it('expires values, counters, attempts and codes (redeemed or not) after their TTL, and not before', async () => {
        const ttl = ns('ttl');
        const [plain, nx, taken, counter, long] = ['plain', 'nx', 'taken', 'counter', 'long'].map((p) => key(p)) as [string, string, string, string, string];
        await store.set(ttl, plain, 'plain', 1);
        expect(await store.usedTotpCodes.claim(nx, 1, 1)).toBe(true);
        await store.roundTrips.start('sign-in', taken, 'taken', 1);
        expect(await store.rates.add(counter, 1, 1)).toBe(1);
        await store.set(ttl, long, 'long', 60);
        const written = key('written');
        await store.deleteAndWrite(ttl, key('absent'), { deleted: [], missing: [{ op: 'set', ns: ttl, key: written, value: 'written', ttlSeconds: 1 }] });
        // Attempts count for their window (1 s) from the first: two now, two after it (a third locks).
        const attemptRule = { limit: 3, windowSeconds: 1, lockSeconds: 60, maxLockSeconds: 60 };
        const attempts = key('attempts');
        expect(await takeAttempt(store, attempts, attemptRule)).toBe(true);
        expect(await takeAttempt(store, attempts, attemptRule)).toBe(true);
        // A lock that outlasts the window (1 s against 0.5 s) keeps the count until it ends.
        const outlasting = { limit: 1, windowSeconds: 0.5, lockSeconds: 1, maxLockSeconds: 1 };
        const locked = key('locked');
        expect(await takeAttempt(store, locked, outlasting)).toBe(true);
        // Codes: their record's write, kept 1 s instead of five minutes; one redeemed before expiry.
        const shortLived = () => {
          const { code, write } = store.codes.create(codeRecord());
          return { code, write: { ...write, ttlSeconds: 1 } };
        };
        const [usedCode, unusedCode] = [shortLived(), shortLived()];
        const liveCode = store.codes.create(codeRecord());
        await store.write([usedCode.write, unusedCode.write, liveCode.write]);
        expect((await store.codes.redeem(usedCode.code)).outcome).toBe('redeemed');

        await opened!.advance(600);
        expect(await takeAttempt(store, locked, outlasting), 'still locked after its window').toBe(false);
        expect((await store.codes.redeem(usedCode.code)).outcome, 'a replay before expiry').toBe('replayed');
        // Not yet expired; a later increment does not restart the counter's TTL.
        expect(await store.get(ttl, plain)).toBe('plain');
        expect(await store.get(ttl, written)).toBe('written');
        expect(await store.usedTotpCodes.claim(nx, 1, 1)).toBe(false);
        expect(await store.rates.add(counter, 1, 1)).toBe(2);

        await opened!.advance(550);
        expect(await store.get(ttl, plain)).toBeUndefined();
        expect(await store.get(ttl, written)).toBeUndefined();
        expect(await store.roundTrips.finish('sign-in', taken)).toBeUndefined();
        expect(await store.usedTotpCodes.claim(nx, 1, 60), 'after expiry').toBe(true);
        expect(await store.usedTotpCodes.claim(nx, 1, 60)).toBe(false);
        expect(await store.rates.add(counter, 1, 1)).toBe(1);
        expect(await store.get(ttl, long)).toBe('long');
        expect(await takeAttempt(store, attempts, attemptRule), 'a new window').toBe(true);
        expect(await takeAttempt(store, attempts, attemptRule), 'a new window').toBe(true);
        expect(await takeAttempt(store, locked, outlasting), 'free once the lock ends').toBe(true);
        expect(await store.codes.redeem(usedCode.code), 'expired once used').toEqual({ outcome: 'unknown' });
        expect(await store.codes.redeem(unusedCode.code), 'expired unused').toEqual({ outcome: 'unknown' });
        expect((await store.codes.redeem(liveCode.code)).outcome).toBe('redeemed');
      });
    });
  });
}
