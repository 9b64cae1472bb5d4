/**
 * The sign-in throttle (src/sessions/throttle.ts) on the in-process store with an injected clock,
 * so locks can be seen both engaging and being released: a name locked after the allowed number
 * of failures, free again after 60 s, locked for twice as long by the next failure, capped at
 * 15 minutes; a success resets the count; an address locked after its own limit over any names.
 * The same rules on Redis (real time, so only what needs no waiting).
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignInThrottle, type SignInThrottle } from '../../../src/sessions/throttle.ts';
import { createMemoryEphemeralStore } from '../../../src/store/ephemeral/memory.ts';
import { createRedisEphemeralStore } from '../../../src/store/ephemeral/redis.ts';
import type { EphemeralStore } from '../../../src/store/types.ts';
import { REDIS_URL, redisAvailable, redisPrefix } from '../../helpers/services.ts';

const LIMITS = { maxFailures: 3, maxFailuresPerAddress: 10 };
const ADDR = '192.0.2.1';
const OTHER_ADDR = '192.0.2.2';
const SECOND = 1000;

describe('sign-in throttle on the in-process store (injected clock)', () => {
  let now = Date.UTC(2026, 0, 15, 9, 0, 0);
  let store: EphemeralStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  function open(limits = LIMITS): SignInThrottle {
    store = createMemoryEphemeralStore(() => now);
    return createSignInThrottle(store, limits);
  }
  const advance = (seconds: number) => {
    now += seconds * SECOND;
  };
  async function fail(t: SignInThrottle, times: number, name = 'alice', address = ADDR): Promise<void> {
    for (let i = 0; i < times; i++) await t.recordFailure(name, address);
  }

  it('locks a name after max failures, not before', async () => {
    const t = open();
    await fail(t, 2);
    expect(await t.isThrottled('alice', ADDR)).toBe(false);
    await fail(t, 1);
    expect(await t.isThrottled('alice', ADDR)).toBe(true);
    // The name is locked from any address; another name from the same address is not.
    expect(await t.isThrottled('alice', OTHER_ADDR)).toBe(true);
    expect(await t.isThrottled('bob', ADDR)).toBe(false);
  });

  it('locks the typed name however it is spelled in case and surrounding spaces', async () => {
    const t = open();
    await fail(t, 1, 'Alice');
    await fail(t, 1, ' alice ');
    await fail(t, 1, 'ALICE');
    expect(await t.isThrottled('alice', OTHER_ADDR)).toBe(true);
    expect(await t.isThrottled('  aLiCe', OTHER_ADDR)).toBe(true);
  });

  it('releases the first lock after 60 s; the next failure locks for 120 s, the one after for 240 s', async () => {
    const t = open();
    await fail(t, 3);
    advance(59);
    expect(await t.isThrottled('alice', ADDR), 'still locked at 59 s').toBe(true);
    advance(1);
    expect(await t.isThrottled('alice', ADDR), 'free at 60 s').toBe(false);

    await fail(t, 1); // fourth failure
    expect(await t.isThrottled('alice', ADDR)).toBe(true);
    advance(119);
    expect(await t.isThrottled('alice', ADDR), 'still locked at 119 s').toBe(true);
    advance(1);
    expect(await t.isThrottled('alice', ADDR), 'free at 120 s').toBe(false);

    await fail(t, 1); // fifth failure
    advance(239);
    expect(await t.isThrottled('alice', ADDR), 'still locked at 239 s').toBe(true);
    advance(1);
    expect(await t.isThrottled('alice', ADDR), 'free at 240 s').toBe(false);
  });

  it('never locks a name for more than 15 minutes', async () => {
    const t = open();
    // 3 + 5 failures: 60 * 2^5 = 1920 s uncapped.
    await fail(t, 8);
    advance(899);
    expect(await t.isThrottled('alice', ADDR)).toBe(true);
    advance(1);
    expect(await t.isThrottled('alice', ADDR)).toBe(false);
  });

  it('resets the count on a success: two more failures then do not lock', async () => {
    const t = open();
    await fail(t, 2);
    await store!.write([t.successWrite('alice')]);
    await fail(t, 2);
    expect(await t.isThrottled('alice', ADDR)).toBe(false);
    await fail(t, 1);
    expect(await t.isThrottled('alice', ADDR)).toBe(true);
  });

  it('after a released lock and a success, the next lock is 60 s again (no doubling left over)', async () => {
    const t = open();
    await fail(t, 4); // locked 120 s
    advance(120);
    expect(await t.isThrottled('alice', ADDR)).toBe(false);
    await store!.write([t.successWrite('alice')]);
    await fail(t, 3);
    advance(60);
    expect(await t.isThrottled('alice', ADDR)).toBe(false);
  });

  it('forgets failures older than 15 minutes', async () => {
    const t = open();
    await fail(t, 2);
    advance(15 * 60);
    await fail(t, 2);
    expect(await t.isThrottled('alice', ADDR)).toBe(false);
  });

  it('locks a name that belongs to no account exactly like one that does', async () => {
    // The throttle does not know about accounts at all; this pins that no lookup sneaks in.
    const t = open();
    await fail(t, 3, 'no-such-user');
    expect(await t.isThrottled('no-such-user', OTHER_ADDR)).toBe(true);
  });

  it('locks an address after its limit over many names, for 15 minutes, and only that address', async () => {
    const t = open({ maxFailures: 3, maxFailuresPerAddress: 5 });
    for (let i = 0; i < 4; i++) await t.recordFailure(`name-${i}`, ADDR);
    expect(await t.isThrottled('fresh-name', ADDR)).toBe(false);
    await t.recordFailure('name-4', ADDR);
    // No name has more than one failure; the address has five.
    expect(await t.isThrottled('fresh-name', ADDR)).toBe(true);
    expect(await t.isThrottled('fresh-name', OTHER_ADDR)).toBe(false);
    expect(await t.isThrottled('name-0', OTHER_ADDR)).toBe(false);
    // A success of some name does not unlock the address.
    await store!.write([t.successWrite('fresh-name')]);
    expect(await t.isThrottled('fresh-name', ADDR)).toBe(true);
    advance(15 * 60 - 1);
    expect(await t.isThrottled('fresh-name', ADDR)).toBe(true);
    advance(1);
    expect(await t.isThrottled('fresh-name', ADDR)).toBe(false);
  });

  it('counts address failures within 15 minutes only', async () => {
    const t = open({ maxFailures: 3, maxFailuresPerAddress: 5 });
    for (let i = 0; i < 4; i++) await t.recordFailure(`name-${i}`, ADDR);
    advance(15 * 60);
    for (let i = 0; i < 4; i++) await t.recordFailure(`later-${i}`, ADDR);
    expect(await t.isThrottled('fresh-name', ADDR)).toBe(false);
  });
});

describe.runIf(redisAvailable)('sign-in throttle on Redis (shared by instances)', () => {
  const prefix = redisPrefix();
  const stores: EphemeralStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });
  function instance(): SignInThrottle {
    const store = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix: prefix });
    stores.push(store);
    return createSignInThrottle(store, LIMITS);
  }

  it('counts failures on two instances together and shows the lock to both', async () => {
    const a = instance();
    const b = instance();
    await a.recordFailure('alice', ADDR);
    await b.recordFailure('alice', ADDR);
    expect(await a.isThrottled('alice', ADDR)).toBe(false);
    await a.recordFailure('alice', ADDR);
    expect(await b.isThrottled('alice', OTHER_ADDR)).toBe(true);
    expect(await b.isThrottled('bob', OTHER_ADDR)).toBe(false);
  });

  it('resets the count on a success seen by the other instance', async () => {
    const a = instance();
    const b = instance();
    await a.recordFailure('carol', ADDR);
    await a.recordFailure('carol', ADDR);
    await stores.at(-1)!.write([b.successWrite('carol')]);
    await a.recordFailure('carol', ADDR);
    await a.recordFailure('carol', ADDR);
    expect(await b.isThrottled('carol', ADDR)).toBe(false);
  });
});
