/**
 * acceptTotp (src/factors/totp.ts) with an injected time: RFC 6238 codes (SHA-1, 30 s, 6 digits)
 * for the current step and one step either way, nothing further, each time step claimable once
 * per user, malformed input refused, on the in-process store and on Redis.
 *
 * What "one step of drift" means here (otplib v13 with epochTolerance 30): the window is
 * [now - 30 s, now + 30 s] in seconds, turned into counters floor((now-30)/30) .. floor((now+30)/30),
 * which is always exactly the current step and its two neighbours, wherever `now` lies inside
 * its step. So a code for now±30 s (the neighbouring step) is accepted and a code for now±60 s
 * (two steps away) is refused, at the start, the middle and the end of a step alike.
 */
import { Redis } from 'ioredis';
import { createGuardrails, generate } from 'otplib';
import { afterEach, describe, expect, it } from 'vitest';
import { acceptTotp } from '../../../src/factors/totp.ts';
import { createMemoryEphemeralStore } from '../../../src/store/ephemeral/memory.ts';
import { createRedisEphemeralStore } from '../../../src/store/ephemeral/redis.ts';
import type { EphemeralStore } from '../../../src/store/types.ts';
import { REDIS_URL, redisAvailable, redisPrefix } from '../../helpers/services.ts';

/** The README seed example's secret: 10 bytes, below otplib's default minimum of 16. */
const SECRET = 'JBSWY3DPEHPK3PXP';
/** A 20-byte secret, as the service generates for enrolment. */
const LONG_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const GUARDRAILS = createGuardrails({ MIN_SECRET_BYTES: 10 });

/** A time in the middle of a 30 s step (step boundaries are at multiples of 30). */
const T0 = 1_790_000_020; // 1_790_000_020 % 30 === 10
const STEP = 30;

const code = (epoch: number, secret = SECRET) => generate({ secret, epoch, guardrails: GUARDRAILS });

/** RFC 6238 Appendix B, SHA-1, seed "12345678901234567890", 8 digits truncated to 6 (mod 10^6). */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
const RFC_VECTORS: Array<[number, string]> = [
  [59, '287082'], // 94287082
  [1111111109, '081804'], // 07081804
  [1111111111, '050471'], // 14050471
  [1234567890, '005924'], // 89005924
  [2000000000, '279037'], // 69279037
];

interface Opened {
  store: EphemeralStore;
  cleanup(): Promise<void>;
}

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

function totpSuite(name: string, open: () => Promise<Opened>): void {
  describe(name, () => {
    let opened: Opened | undefined;
    afterEach(async () => {
      await opened?.cleanup();
      opened = undefined;
    });
    const store = async () => (opened = await open()).store;
    let n = 0;
    const user = () => `user-${name}-${++n}`;

    it('matches the RFC 6238 SHA-1 test vectors (so the test codes are the real ones)', async () => {
      const s = await store();
      for (const [time, expected] of RFC_VECTORS) {
        expect(await code(time, RFC_SECRET)).toBe(expected);
        expect(await acceptTotp(s, user(), RFC_SECRET, expected, time), `t=${time}`).toBe(true);
      }
    });

    it('accepts the current code', async () => {
      const s = await store();
      expect(await acceptTotp(s, user(), SECRET, await code(T0), T0)).toBe(true);
    });

    it('accepts a code one step behind and one step ahead (now-30 s, now+30 s)', async () => {
      const s = await store();
      expect(await acceptTotp(s, user(), SECRET, await code(T0 - STEP), T0)).toBe(true);
      expect(await acceptTotp(s, user(), SECRET, await code(T0 + STEP), T0)).toBe(true);
    });

    it('refuses codes two or more steps away (now±60 s, now±90 s)', async () => {
      const s = await store();
      const u = user();
      for (const offset of [-90, -60, 60, 90]) {
        const c = await code(T0 + offset);
        expect(c, 'differs from the current code').not.toBe(await code(T0));
        expect(await acceptTotp(s, u, SECRET, c, T0), `offset ${offset}`).toBe(false);
      }
      // The refusals claimed nothing: the current code still works.
      expect(await acceptTotp(s, u, SECRET, await code(T0), T0)).toBe(true);
    });

    it('takes one step of drift the same way at the first and the last second of a step', async () => {
      const s = await store();
      const start = T0 - 10; // a step boundary
      const end = start + 29;
      expect(start % STEP).toBe(0);
      // At the first second: the previous step is in, the one before is out.
      expect(await acceptTotp(s, user(), SECRET, await code(start - 1), start)).toBe(true);
      expect(await acceptTotp(s, user(), SECRET, await code(start - STEP - 1), start)).toBe(false);
      expect(await acceptTotp(s, user(), SECRET, await code(start + STEP), start)).toBe(true);
      expect(await acceptTotp(s, user(), SECRET, await code(start + 2 * STEP), start)).toBe(false);
      // At the last second: the next step is in, the one after is out.
      expect(await acceptTotp(s, user(), SECRET, await code(end + 1), end)).toBe(true);
      expect(await acceptTotp(s, user(), SECRET, await code(end + STEP + 1), end)).toBe(false);
      expect(await acceptTotp(s, user(), SECRET, await code(start - STEP), end)).toBe(true);
      expect(await acceptTotp(s, user(), SECRET, await code(start - 2 * STEP), end)).toBe(false);
    });

    it('accepts a code once: a replay is refused within its window, and at a later moment of it', async () => {
      const s = await store();
      const u = user();
      const c = await code(T0);
      expect(await acceptTotp(s, u, SECRET, c, T0)).toBe(true);
      expect(await acceptTotp(s, u, SECRET, c, T0)).toBe(false);
      expect(await acceptTotp(s, u, SECRET, c, T0 + 15)).toBe(false);
      // Still inside the drift window one step later: still refused.
      expect(await acceptTotp(s, u, SECRET, c, T0 + STEP)).toBe(false);
      // The next step's code is a new code and works.
      expect(await acceptTotp(s, u, SECRET, await code(T0 + STEP), T0 + STEP)).toBe(true);
    });

    it('refuses a code of a step that was already claimed through drift', async () => {
      const s = await store();
      const u = user();
      // The code of the next step used early (phone a little fast)...
      expect(await acceptTotp(s, u, SECRET, await code(T0 + STEP), T0)).toBe(true);
      // ...is not accepted again when its own step arrives.
      expect(await acceptTotp(s, u, SECRET, await code(T0 + STEP), T0 + STEP)).toBe(false);
    });

    it('claims per user: the same code works once for each of two users with the same secret', async () => {
      const s = await store();
      const c = await code(T0);
      expect(await acceptTotp(s, user(), SECRET, c, T0)).toBe(true);
      expect(await acceptTotp(s, user(), SECRET, c, T0)).toBe(true);
    });

    it('is atomic: of two simultaneous uses of one code, exactly one wins', async () => {
      const s = await store();
      const u = user();
      const c = await code(T0);
      const results = await Promise.all(Array.from({ length: 5 }, () => acceptTotp(s, u, SECRET, c, T0)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('accepts spaces inside a code (as the page allows) but nothing else', async () => {
      const s = await store();
      const c = await code(T0);
      expect(await acceptTotp(s, user(), SECRET, `${c.slice(0, 3)} ${c.slice(3)}`, T0)).toBe(true);
    });

    it.each([
      ['empty', () => ''],
      ['five digits', (c: string) => c.slice(0, 5)],
      ['seven digits', (c: string) => `${c}0`],
      ['letters', () => 'abcdef'],
      ['a sign', (c: string) => `+${c.slice(1)}`],
      ['a decimal point', (c: string) => `${c.slice(0, 5)}.`],
      ['full-width digits', (c: string) => [...c].map((d) => String.fromCharCode(0xff10 + Number(d))).join('')],
      ['a wrong six-digit code', (c: string) => String((Number(c) + 1) % 1_000_000).padStart(6, '0')],
    ])('refuses a malformed or wrong code: %s', async (_label, mangle) => {
      const s = await store();
      const u = user();
      const c = await code(T0);
      expect(await acceptTotp(s, u, SECRET, mangle(c), T0)).toBe(false);
      // Nothing was claimed by the refusal.
      expect(await acceptTotp(s, u, SECRET, c, T0)).toBe(true);
    });

    it('refuses (without throwing) when the secret is not base32 or too short', async () => {
      const s = await store();
      await expect(acceptTotp(s, user(), 'not base32 at all!', '123456', T0)).resolves.toBe(false);
      // A 5-byte secret: its real current code is still refused (below the 10-byte floor).
      const short = await generate({ secret: 'JBSWY3DP', epoch: T0, guardrails: createGuardrails({ MIN_SECRET_BYTES: 1 }) });
      await expect(acceptTotp(s, user(), 'JBSWY3DP', short, T0)).resolves.toBe(false);
    });

    it('works with a generated 20-byte secret', async () => {
      const s = await store();
      expect(await acceptTotp(s, user(), LONG_SECRET, await code(T0, LONG_SECRET), T0)).toBe(true);
    });
  });
}

totpSuite('in-process store', async () => {
  const store = createMemoryEphemeralStore(() => T0 * 1000);
  return { store, cleanup: () => store.close() };
});

describe.runIf(redisAvailable)('Redis', () => {
  totpSuite('Redis store', async () => {
    const keyPrefix = redisPrefix();
    const store = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix });
    return {
      store,
      async cleanup() {
        await store.close();
        await deleteKeys(keyPrefix);
      },
    };
  });
});
