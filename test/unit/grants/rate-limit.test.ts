/**
 * The token endpoint's rate limiter (createRateLimiter) on the injected clock, on the in-process
 * store and on Redis: it trips past the budget within a fixed one-minute window with slow_down
 * and a Retry-After up to the window's end, and recovers when the clock moves into the next
 * minute. On Redis, two limiters (two instances) share one budget.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/errors.ts';
import { createRateLimiter, type RateLimiter } from '../../../src/sessions/rate-limiters.ts';
import { createMemoryEphemeralStore } from '../../../src/store/ephemeral/memory.ts';
import { createRedisEphemeralStore } from '../../../src/store/ephemeral/redis.ts';
import type { EphemeralStore } from '../../../src/store/types.ts';
import { REDIS_URL, redisAvailable, redisPrefix } from '../../helpers/services.ts';

/** 12:00:10 UTC: ten seconds into a minute. */
const START = Date.UTC(2026, 10, 22, 12, 0, 10);
const PER_MINUTE = 3;

/** 'ok', or 'slow_down:<retryAfter>'. */
async function attempt(limiter: RateLimiter, subject: string): Promise<string> {
  try {
    await limiter.consume(subject);
    return 'ok';
  } catch (error) {
    if (error instanceof OAuthError) return `${error.code}:${error.retryAfter}:${error.status}`;
    throw error;
  }
}

interface Backend {
  name: string;
  open(clock: () => number): Promise<{ store: EphemeralStore; another(): EphemeralStore; cleanup(): Promise<void> }>;
}

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

const backends: Array<Backend & { available: boolean }> = [
  {
    name: 'the in-process store',
    available: true,
    async open(clock) {
      const store = createMemoryEphemeralStore(clock);
      return { store, another: () => store, cleanup: () => store.close() };
    },
  },
  {
    name: 'Redis',
    available: redisAvailable,
    async open() {
      const keyPrefix = redisPrefix();
      const store = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix });
      const others: EphemeralStore[] = [];
      return {
        store,
        another() {
          const other = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix });
          others.push(other);
          return other;
        },
        async cleanup() {
          await Promise.all([store, ...others].map((s) => s.close()));
          await deleteKeys(keyPrefix);
        },
      };
    },
  },
];

for (const backend of backends) {
  describe.runIf(backend.available)(`the token rate limiter on ${backend.name}`, () => {
    let now = START;
    const clock = () => now;
    let opened: Awaited<ReturnType<Backend['open']>>;
    let limiter: RateLimiter;

    beforeAll(async () => {
      opened = await backend.open(clock);
      limiter = createRateLimiter(opened.store, clock, PER_MINUTE);
    });
    afterAll(async () => {
      await opened?.cleanup();
    });

    // Each step: move the clock to `at` seconds after START, make one request, expect the answer.
    const table: Array<{ at: number; subject: string; expect: string; why: string }> = [
      { at: 0, subject: 'client:web', expect: 'ok', why: '1st in the window' },
      { at: 1, subject: 'client:web', expect: 'ok', why: '2nd' },
      { at: 2, subject: 'client:web', expect: 'ok', why: '3rd: the whole budget' },
      { at: 2, subject: 'client:web', expect: 'slow_down:48:429', why: '4th: 48 s to the next minute' },
      { at: 3, subject: 'client:other', expect: 'ok', why: 'another subject has its own budget' },
      { at: 3, subject: 'addr:10.0.0.1', expect: 'ok', why: 'an address has its own budget' },
      { at: 49, subject: 'client:web', expect: 'slow_down:1:429', why: 'the last second of the window' },
      { at: 50, subject: 'client:web', expect: 'ok', why: 'the next minute: recovered' },
      { at: 51, subject: 'client:web', expect: 'ok', why: '2nd of the new window' },
      { at: 52, subject: 'client:web', expect: 'ok', why: '3rd of the new window' },
      { at: 53, subject: 'client:web', expect: 'slow_down:57:429', why: '4th of the new window' },
      { at: 170, subject: 'client:web', expect: 'ok', why: 'two minutes later' },
    ];

    it('trips past the budget with slow_down and Retry-After, and recovers in the next minute', async () => {
      const seen: string[] = [];
      for (const step of table) {
        now = START + step.at * 1000;
        seen.push(`${step.at}s ${step.subject} ${await attempt(limiter, step.subject)} (${step.why})`);
      }
      expect(seen).toStrictEqual(table.map((s) => `${s.at}s ${s.subject} ${s.expect} (${s.why})`));
    });

    it('shares one budget between limiters on the same store (instances)', async () => {
      now = START + 10 * 60_000;
      const second = createRateLimiter(opened.another(), clock, PER_MINUTE);
      expect(await attempt(limiter, 'client:shared')).toBe('ok');
      expect(await attempt(second, 'client:shared')).toBe('ok');
      expect(await attempt(limiter, 'client:shared')).toBe('ok');
      expect(await attempt(second, 'client:shared')).toBe('slow_down:50:429');
      expect(await attempt(limiter, 'client:shared')).toBe('slow_down:50:429');
      now += 60_000;
      expect(await attempt(second, 'client:shared')).toBe('ok');
    });

    it('takes a request\'s share back when it is given back, within its window only', async () => {
      now = START + 20 * 60_000;
      const failed = await limiter.consume('client:given');
      failed();
      // Given back: the whole budget is left for requests that keep their share.
      for (let i = 0; i < PER_MINUTE; i++) expect(await attempt(limiter, 'client:given')).toBe('ok');
      expect(await attempt(limiter, 'client:given')).toBe('slow_down:50:429');
      // A share given back once the budget has run out is one more request served.
      now += 60_000;
      const shares = [];
      for (let i = 0; i < PER_MINUTE; i++) shares.push(await limiter.consume('client:given'));
      expect(await attempt(limiter, 'client:given')).toBe('slow_down:50:429');
      shares[0]?.();
      expect(await attempt(limiter, 'client:given')).toBe('ok');
      expect(await attempt(limiter, 'client:given')).toBe('slow_down:50:429');
      // A share given back after its window has passed is not added to the next one.
      now += 60_000;
      const late = await limiter.consume('client:late');
      now += 60_000;
      late();
      for (let i = 0; i < PER_MINUTE; i++) expect(await attempt(limiter, 'client:late')).toBe('ok');
      expect(await attempt(limiter, 'client:late')).toBe('slow_down:50:429');
    });
  });
}
