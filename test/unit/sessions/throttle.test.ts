/**
 * The sign-in throttle (src/sessions/throttle.ts) on the in-process store with an injected clock,
 * so locks can be seen both engaging and being released: a name locked at one address after the
 * allowed number of failures (not at another), free again after 60 s, locked for twice as long
 * by the next failure, capped at 15 minutes; a success resets the count; an account closed to
 * unrecognised devices after its ceiling over every address, a known device counted on its own;
 * an interaction's bound; an address locked after its own limit over any names; an attempt
 * given back (a right guess) counts for nothing; a concurrent burst gets no more than the limit
 * through. The same rules on Redis (real time, so only what needs no waiting), across two
 * instances.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignInThrottle, type GuessContext, type Refusal, type SignInAttempt, type SignInThrottle } from '../../../src/sessions/throttle.ts';
import { createMemoryEphemeralStore } from '../../../src/store/ephemeral/memory.ts';
import { createRedisEphemeralStore } from '../../../src/store/ephemeral/redis.ts';
import type { EphemeralStore } from '../../../src/store/types.ts';
import { REDIS_URL, redisAvailable, redisPrefix } from '../../helpers/services.ts';

const LIMITS = { maxFailures: 3, maxFailuresPerAddress: 10, maxFailuresPerAccount: 6, maxAttemptsPerInteraction: 4 };
const ADDR = '192.0.2.1';
const OTHER_ADDR = '192.0.2.2';
const SECOND = 1000;

/** The attempt taken, or undefined when refused. */
async function take(t: SignInThrottle, name: string, address: string, context?: GuessContext): Promise<SignInAttempt | undefined> {
  const answer = await t.attempt(name, address, context);
  return 'refused' in answer ? undefined : answer;
}

/** Why a guess would be refused now (undefined: it would be judged); one let in is given back, so asking changes nothing. */
async function refusal(t: SignInThrottle, name: string, address: string, context?: GuessContext): Promise<Refusal | undefined> {
  const answer = await t.attempt(name, address, context);
  if ('refused' in answer) return answer.refused;
  await answer.giveBack();
  return undefined;
}

async function isThrottled(t: SignInThrottle, name: string, address: string, context?: GuessContext): Promise<boolean> {
  return (await refusal(t, name, address, context)) !== undefined;
}

async function failOnce(t: SignInThrottle, name: string, address: string, context?: GuessContext): Promise<void> {
  expect(await take(t, name, address, context), `a failure of ${name} let in`).toBeDefined();
}

/** Fires `size` attempts at once and counts those let in (each kept, as a wrong guess would be). */
async function burst(throttles: SignInThrottle[], size: number, name: (i: number) => string, address: (i: number) => string, context?: GuessContext): Promise<number> {
  const taken = await Promise.all(Array.from({ length: size }, (_, i) => take(throttles[i % throttles.length]!, name(i), address(i), context)));
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
    for (let i = 0; i < times; i++) expect(await take(t, name, address), `failure ${i + 1} of ${name} let in`).toBeDefined();
  }

  it('locks a name at an address after max failures, not before', async () => {
    const t = open();
    await fail(t, 2);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
    await fail(t, 1);
    expect(await refusal(t, 'alice', ADDR)).toBe('throttled');
    // Not at another address (a guesser elsewhere locks nobody out), nor another name here.
    expect(await isThrottled(t, 'alice', OTHER_ADDR)).toBe(false);
    expect(await isThrottled(t, 'bob', ADDR)).toBe(false);
  });

  it('locks the typed name however it is spelled in case and surrounding spaces', async () => {
    const t = open();
    await fail(t, 1, 'Alice');
    await fail(t, 1, ' alice ');
    await fail(t, 1, 'ALICE');
    expect(await isThrottled(t, 'alice', ADDR)).toBe(true);
    expect(await isThrottled(t, '  aLiCe', ADDR)).toBe(true);
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
    // The count over every address would close the account first: not what is seen here.
    const t = open({ ...LIMITS, maxFailuresPerAccount: 100 });
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
    await store!.write([t.successWrite('alice', ADDR)]);
    await fail(t, 2);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
    await fail(t, 1);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(true);
  });

  it('after a released lock and a success, the next lock is 60 s again (no doubling left over)', async () => {
    // The count over every address would close the account first: not what is seen here.
    const t = open({ ...LIMITS, maxFailuresPerAccount: 100 });
    await fail(t, 3);
    advance(60);
    await fail(t, 1); // locked 120 s
    advance(120);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
    await store!.write([t.successWrite('alice', ADDR)]);
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
    expect(await isThrottled(t, 'no-such-user', ADDR)).toBe(true);
  });

  it('locks an address after its limit over many names, for 15 minutes, and only that address', async () => {
    const t = open({ ...LIMITS, maxFailuresPerAddress: 5 });
    for (let i = 0; i < 4; i++) await fail(t, 1, `name-${i}`);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(false);
    await fail(t, 1, 'name-4');
    // No name has more than one failure; the address has five.
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(true);
    expect(await isThrottled(t, 'fresh-name', OTHER_ADDR)).toBe(false);
    expect(await isThrottled(t, 'name-0', OTHER_ADDR)).toBe(false);
    // A success of some name does not unlock the address.
    await store!.write([t.successWrite('fresh-name', ADDR)]);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(true);
    advance(15 * 60 - 1);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(true);
    advance(1);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(false);
  });

  it('lets exactly the limit through a concurrent burst of 100 guesses at one name from one address, then locks it', async () => {
    const t = open();
    expect(await burst([t], 100, () => 'alice', () => ADDR)).toBe(LIMITS.maxFailures);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(true);
    advance(60);
    expect(await burst([t], 100, () => 'alice', () => ADDR), 'after the first lock: one more, then 120 s').toBe(1);
  });

  it('lets exactly the account ceiling through a burst of 100 guesses at one name from 100 addresses, for 15 minutes; a known device still gets in', async () => {
    const t = open();
    expect(await burst([t], 100, () => 'alice', (i) => `198.51.100.${i}`)).toBe(LIMITS.maxFailuresPerAccount);
    expect(await refusal(t, 'alice', OTHER_ADDR)).toBe('unrecognised-device');
    expect(await refusal(t, 'alice', OTHER_ADDR, { device: 'alice-phone' }), 'a known device').toBeUndefined();
    expect(await refusal(t, 'bob', OTHER_ADDR), 'another account').toBeUndefined();
    advance(15 * 60 - 1);
    expect(await burst([t], 100, () => 'alice', (i) => `203.0.113.${i}`), 'until the window has passed').toBe(0);
    advance(1);
    expect(await burst([t], 100, () => 'alice', (i) => `203.0.113.${i}`)).toBe(LIMITS.maxFailuresPerAccount);
  });

  it("counts a known device's failures on their own: they lock that device only, and no other lock reaches it", async () => {
    const t = open({ ...LIMITS, maxFailuresPerAddress: 5 });
    const phone = { device: 'alice-phone' };
    await fail(t, 1, 'alice');
    for (let i = 0; i < 3; i++) await failOnce(t, 'alice', ADDR, phone);
    expect(await refusal(t, 'alice', ADDR, phone)).toBe('throttled');
    expect(await refusal(t, 'alice', ADDR), 'not the account here: one failure of its own').toBeUndefined();
    expect(await refusal(t, 'alice', ADDR, { device: 'alice-laptop' })).toBeUndefined();
    // The address and the account locked by others: a known device does not notice.
    for (let i = 0; i < 4; i++) await fail(t, 1, `sprayed-${i}`);
    expect(await refusal(t, 'alice', ADDR)).toBe('throttled');
    expect(await burst([t], 20, () => 'alice', (i) => `198.51.100.${i}`)).toBe(LIMITS.maxFailuresPerAccount - 1);
    expect(await refusal(t, 'alice', ADDR, { device: 'alice-laptop' })).toBeUndefined();
    advance(60);
    expect(await refusal(t, 'alice', ADDR, phone), 'its own lock runs out').toBeUndefined();
  });

  it('lets an interaction take its bound of attempts, even in a concurrent burst, then refuses it', async () => {
    const t = open({ ...LIMITS, maxFailuresPerAddress: 1000 });
    const page = { interaction: 'interaction-1' };
    expect(await burst([t], 50, (i) => `name-${i}`, () => ADDR, page)).toBe(LIMITS.maxAttemptsPerInteraction);
    expect(await refusal(t, 'fresh-name', ADDR, page)).toBe('interaction-used-up');
    expect(await refusal(t, 'fresh-name', ADDR, { interaction: 'interaction-2' })).toBeUndefined();
  });

  it("a success forgets the name's failures at its address, not the account's count over every address", async () => {
    const t = open();
    for (let i = 0; i < 5; i++) await fail(t, 1, 'alice', `198.51.100.${i}`);
    await store!.write([t.successWrite('alice', '198.51.100.0')]);
    await fail(t, 1, 'alice', OTHER_ADDR);
    expect(await refusal(t, 'alice', ADDR)).toBe('unrecognised-device');
  });

  it('lets exactly the address limit through a concurrent burst over 100 names from one address', async () => {
    const t = open({ ...LIMITS, maxFailuresPerAddress: 7 });
    expect(await burst([t], 100, (i) => `name-${i}`, () => ADDR)).toBe(7);
    expect(await isThrottled(t, 'fresh-name', ADDR)).toBe(true);
    // The names refused took nothing: each has all three of its attempts from elsewhere.
    await fail(t, 2, 'name-99', OTHER_ADDR);
    expect(await isThrottled(t, 'name-99', OTHER_ADDR)).toBe(false);
  });

  it('a guess given back counts for nothing, even the one that reached the limit and locked', async () => {
    const t = open();
    await fail(t, 2);
    const third = await take(t, 'alice', ADDR);
    expect(third).toBeDefined();
    // While it is judged, the name is locked: a concurrent guess is refused.
    expect(await take(t, 'alice', ADDR)).toBeUndefined();
    await third!.giveBack();
    expect(await isThrottled(t, 'alice', ADDR), 'the right guess lifted its own lock').toBe(false);
    await fail(t, 1);
    expect(await isThrottled(t, 'alice', ADDR), 'third failure').toBe(true);
  });

  it('a right guess let in once a lock has run out lifts the lock it set; a wrong one locks for twice as long', async () => {
    const t = open();
    await fail(t, 3);
    advance(60);
    const right = await take(t, 'alice', ADDR);
    await right!.giveBack();
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
    await fail(t, 1);
    advance(119);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(true);
    advance(1);
    expect(await isThrottled(t, 'alice', ADDR)).toBe(false);
  });

  it('a locked address takes nothing from the name, and a closed account nothing from the address', async () => {
    const t = open({ ...LIMITS, maxFailuresPerAddress: 5 });
    for (let i = 0; i < 5; i++) await fail(t, 1, `name-${i}`);
    for (let i = 0; i < 5; i++) expect(await take(t, 'bob', ADDR)).toBeUndefined();
    await fail(t, 2, 'bob', OTHER_ADDR);
    expect(await isThrottled(t, 'bob', OTHER_ADDR)).toBe(false);

    for (let i = 0; i < 4; i++) await fail(t, 1, 'bob', `198.51.100.${i}`);
    const third = '192.0.2.3';
    for (let i = 0; i < 10; i++) expect(await refusal(t, 'bob', third)).toBe('unrecognised-device');
    await fail(t, 2, 'carol', third);
    await fail(t, 2, 'dan', third);
    expect(await isThrottled(t, 'dave', third), 'four failures of the address, not fourteen').toBe(false);
  });

  it('counts address failures within 15 minutes only', async () => {
    const t = open({ ...LIMITS, maxFailuresPerAddress: 5 });
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
    expect(await isThrottled(b, 'alice', ADDR)).toBe(true);
    expect(await isThrottled(b, 'bob', ADDR)).toBe(false);
  });

  it('lets exactly the account ceiling through a burst of 200 concurrent guesses at one name from 200 addresses, over two instances', async () => {
    const a = instance();
    const b = instance();
    expect(await burst([a, b], 200, () => 'mallory', (i) => `198.51.${100 + (i % 2)}.${i}`)).toBe(LIMITS.maxFailuresPerAccount);
    expect(await refusal(b, 'mallory', OTHER_ADDR)).toBe('unrecognised-device');
    expect(await refusal(a, 'mallory', OTHER_ADDR, { device: 'mallory-phone' })).toBeUndefined();
  });

  it("lets exactly an interaction's bound through a burst of 200 concurrent guesses in it, over two instances", async () => {
    const a = instance();
    const b = instance();
    expect(await burst([a, b], 200, (i) => `victim-${i}`, (i) => `198.51.100.${i}`, { interaction: 'one-page' })).toBe(LIMITS.maxAttemptsPerInteraction);
    expect(await refusal(a, 'victim-0', OTHER_ADDR, { interaction: 'one-page' })).toBe('interaction-used-up');
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
    const third = await take(a, 'erin', ADDR);
    expect(third).toBeDefined();
    expect(await take(b, 'erin', ADDR)).toBeUndefined();
    await third!.giveBack();
    expect(await isThrottled(b, 'erin', ADDR)).toBe(false);
  });

  it('resets the count on a success seen by the other instance', async () => {
    const a = instance();
    const b = instance();
    await failOnce(a, 'carol', ADDR);
    await failOnce(a, 'carol', ADDR);
    await stores.at(-1)!.write([b.successWrite('carol', ADDR)]);
    await failOnce(a, 'carol', ADDR);
    await failOnce(a, 'carol', ADDR);
    expect(await isThrottled(b, 'carol', ADDR)).toBe(false);
  });
});
