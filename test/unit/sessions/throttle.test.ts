/**
 * The sign-in throttle (src/sessions/throttle.ts) on the in-process store with an injected clock,
 * so locks can be seen both engaging and being released: a name locked after the allowed number
 * of failures, free again after 60 s, locked for twice as long by the next failure, capped at
 * 15 minutes; a success resets the count; an address locked after its own limit over any names;
 * an attempt given back (a right guess) counts for nothing; a concurrent burst gets no more than
 * the limit through. The same rules on Redis (real time, so only what needs no waiting), across
 * two instances.
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

/** Whether a guess would be refused now; one let in is given back, so asking changes nothing. */
async function isThrottled(t: SignInThrottle, name: string, address: string): Promise<boolean> {
  const attempt = await t.attempt(name, address);
  await attempt?.giveBack();
  return attempt === undefined;
}

async function failOnce(t: SignInThrottle, name: string, address: string): Promise<void> {
  expect(await t.attempt(name, address), `a failure of ${name} let in`).toBeDefined();
}

/** Fires `size` attempts at once and counts those let in (each kept, as a wrong guess would be). */
async function burst(throttles: SignInThrottle[], size: number, name: (i: number) => string, address: (i: number) => string): Promise<number> {
  const taken = await Promise.all(Array.from({ length: size }, (_, i) => throttles[i % throttles.length]!.attempt(name(i), address(i))));
  return taken.filter((a) => a !== undefined).length;
}

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
    for (let i = 0; i < times; i++) expect(await t.attempt(name, address), `failure ${i + 1} of ${name} let in`).toBeDefined();
  }

  it('locks a name after max failures, not before', async () => {
    const t = open();
    await fail(t, 2);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
    await fail(t, 1);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(true);
    // The name is locked from any address; another name from the same address is not.
    expect(await isThrottled(t, 'alice', OTHER_ADDR)).toBe(true);
    expect(await isThrottled(t, 'bob', ADDR)).toBe(false);
  });

  it('locks the typed name however it is spelled in case and surrounding spaces', async () => {
    const t = open();
    await fail(t, 1, 'Alice');
    await fail(t, 1, ' alice ');
    await fail(t, 1, 'ALICE');
    expect(await isThrottled(t, 'alice', OTHER_ADDR)).toBe(true);
    expect(await isThrottled(t, '  aLiCe', OTHER_ADDR)).toBe(true);
  });

  it('releases the first lock after 60 s; the next failure locks for 120 s, the one after for 240 s', async () => {
    const t = open();
    await fail(t, 3);
    advance(59);
    expect(await isThrottled(t, 'alice', ADDR), 'still locked at 59 s').toBe(true);
    advance(1);
    expect(await isThrottled(t, 'alice', ADDR), 'free at 60 s').toBe(false);

    await fail(t, 1); // fourth failure
    expect(await isThrottled(t, 'alice', ADDR)).toBe(true);
    advance(119);
    expect(await isThrottled(t, 'alice', ADDR), 'still locked at 119 s').toBe(true);
    advance(1);
    expect(await isThrottled(t, 'alice', ADDR), 'free at 120 s').toBe(false);

    await fail(t, 1); // fifth failure
    advance(239);
    expect(await isThrottled(t, 'alice', ADDR), 'still locked at 239 s').toBe(true);
    advance(1);
    expect(await isThrottled(t, 'alice', ADDR), 'free at 240 s').toBe(false);
  });

  it('doubles while the failures are within 15 minutes of the first (60, 120, 240, 480 s), then counts afresh', async () => {
    // The longest lock, 15 minutes, is the store's cap (its contract); here the count runs out first.
    const t = open();
    await fail(t, 3);
    for (const lock of [60, 120, 240]) {
      advance(lock);
      await fail(t, 1);
    }
    advance(479);
    expect(await isThrottled(t, 'alice', ADDR), 'still locked at 479 s').toBe(true);
    advance(1);
    // 900 s after the first failure: the count has gone with the last lock, three guesses again.
    await fail(t, 2);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
  });

  it('resets the count on a success: two more failures then do not lock', async () => {
    const t = open();
    await fail(t, 2);
    await store!.write([t.successWrite('alice')]);
    await fail(t, 2);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
    await fail(t, 1);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(true);
  });

  it('after a released lock and a success, the next lock is 60 s again (no doubling left over)', async () => {
    const t = open();
    await fail(t, 3);
    advance(60);
    await fail(t, 1); // locked 120 s
    advance(120);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
    await store!.write([t.successWrite('alice')]);
    await fail(t, 3);
    advance(60);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
  });

  it('forgets failures older than 15 minutes', async () => {
    const t = open();
    await fail(t, 2);
    advance(15 * 60);
    await fail(t, 2);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
  });

  it('locks a name that belongs to no account exactly like one that does', async () => {
    // The throttle does not know about accounts at all; this pins that no lookup sneaks in.
    const t = open();
    await fail(t, 3, 'no-such-user');
    expect(await isThrottled(t, 'no-such-user', OTHER_ADDR)).toBe(true);
  });

  it('locks an address after its limit over many names, for 15 minutes, and only that address', async () => {
    const t = open({ maxFailures: 3, maxFailuresPerAddress: 5 });
    for (let i = 0; i < 4; i++) await fail(t, 1, `name-${i}`);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(false);
    await fail(t, 1, 'name-4');
    // No name has more than one failure; the address has five.
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(true);
    expect(await isThrottled(t, 'fresh-name', OTHER_ADDR)).toBe(false);
    expect(await isThrottled(t, 'name-0', OTHER_ADDR)).toBe(false);
    // A success of some name does not unlock the address.
    await store!.write([t.successWrite('fresh-name')]);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(true);
    advance(15 * 60 - 1);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(true);
    advance(1);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(false);
  });

  it('lets exactly the limit through a concurrent burst of 100 guesses at one name, then locks it', async () => {
    const t = open();
    expect(await burst([t], 100, () => 'alice', (i) => `198.51.100.${i}`)).toBe(LIMITS.maxFailures);
    expect(await isThrottled(t, 'alice', OTHER_ADDR)).toBe(true);
    advance(60);
    expect(await burst([t], 100, () => 'alice', (i) => `198.51.100.${i}`), 'after the first lock: one more, then 120 s').toBe(1);
  });

  it('lets exactly the address limit through a concurrent burst over 100 names from one address', async () => {
    const t = open({ maxFailures: 3, maxFailuresPerAddress: 7 });
    expect(await burst([t], 100, (i) => `name-${i}`, () => ADDR)).toBe(7);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(true);
    // The names refused took nothing: each has all three of its attempts from elsewhere.
    await fail(t, 2, 'name-99', OTHER_ADDR);
    expect(await isThrottled(t, 'name-99', OTHER_ADDR)).toBe(false);
  });

  it('a guess given back counts for nothing, even the one that reached the limit and locked', async () => {
    const t = open();
    await fail(t, 2);
    const third = await t.attempt('alice', ADDR);
    expect(third).toBeDefined();
    // While it is judged, the name is locked: a concurrent guess is refused.
    expect(await t.attempt('alice', OTHER_ADDR)).toBeUndefined();
    await third!.giveBack();
    expect(await isThrottled(t, 'alice', ADDR), 'the right guess lifted its own lock').toBe(false);
    await fail(t, 1);
    expect(await isThrottled(t, 'alice', ADDR), 'third failure').toBe(true);
  });

  it('a right guess let in once a lock has run out lifts the lock it set; a wrong one locks for twice as long', async () => {
    const t = open();
    await fail(t, 3);
    advance(60);
    const right = await t.attempt('alice', ADDR);
    await right!.giveBack();
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
    await fail(t, 1);
    advance(119);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(true);
    advance(1);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
  });

  it('a locked address takes nothing from the name, and a locked name nothing from the address', async () => {
    const t = open({ maxFailures: 3, maxFailuresPerAddress: 5 });
    for (let i = 0; i < 5; i++) await fail(t, 1, `name-${i}`);
    for (let i = 0; i < 5; i++) expect(await t.attempt('bob', ADDR)).toBeUndefined();
    await fail(t, 2, 'bob', OTHER_ADDR);
    expect(await isThrottled(t, 'bob', OTHER_ADDR)).toBe(false);

    await fail(t, 1, 'bob', OTHER_ADDR);
    const third = '192.0.2.3';
    for (let i = 0; i < 10; i++) expect(await t.attempt('bob', third)).toBeUndefined();
    await fail(t, 2, 'carol', third);
    await fail(t, 2, 'dan', third);
    expect(await isThrottled(t, 'dave', third), 'four failures of the address, not fourteen').toBe(false);
  });

  it('counts address failures within 15 minutes only', async () => {
    const t = open({ maxFailures: 3, maxFailuresPerAddress: 5 });
    for (let i = 0; i < 4; i++) await fail(t, 1, `name-${i}`);
    advance(15 * 60);
    for (let i = 0; i < 4; i++) await fail(t, 1, `later-${i}`);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(false);
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
    await failOnce(a, 'alice', ADDR);
    await failOnce(b, 'alice', ADDR);
    expect(await isThrottled(a, 'alice', ADDR)).toBe(false);
    await failOnce(a, 'alice', ADDR);
    expect(await isThrottled(b, 'alice', OTHER_ADDR)).toBe(true);
    expect(await isThrottled(b, 'bob', OTHER_ADDR)).toBe(false);
  });

  it('lets exactly the limit through a burst of 200 concurrent guesses at one name split over two instances', async () => {
    const a = instance();
    const b = instance();
    expect(await burst([a, b], 200, () => 'mallory', (i) => `198.51.100.${i}`)).toBe(LIMITS.maxFailures);
    expect(await isThrottled(b, 'mallory', OTHER_ADDR)).toBe(true);
  });

  it('lets exactly the address limit through a burst of 200 concurrent guesses over names, on two instances', async () => {
    const a = instance();
    const b = instance();
    expect(await burst([a, b], 200, (i) => `victim-${i}`, () => '198.51.100.200')).toBe(LIMITS.maxFailuresPerAddress);
  });

  it('a guess given back on one instance lifts the lock it set for the other', async () => {
    const a = instance();
    const b = instance();
    await failOnce(a, 'erin', ADDR);
    await failOnce(b, 'erin', ADDR);
    const third = await a.attempt('erin', ADDR);
    expect(third).toBeDefined();
    expect(await b.attempt('erin', OTHER_ADDR)).toBeUndefined();
    await third!.giveBack();
    expect(await isThrottled(b, 'erin', OTHER_ADDR)).toBe(false);
  });

  it('resets the count on a success seen by the other instance', async () => {
    const a = instance();
    const b = instance();
    await failOnce(a, 'carol', ADDR);
    await failOnce(a, 'carol', ADDR);
    await stores.at(-1)!.write([b.successWrite('carol')]);
    await failOnce(a, 'carol', ADDR);
    await failOnce(a, 'carol', ADDR);
    expect(await isThrottled(b, 'carol', ADDR)).toBe(false);
  });
});
