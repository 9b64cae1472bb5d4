/**
 * The stores of one purpose each on an ephemeral backend (used TOTP codes, rate counters,
 * round trips to an upstream provider), part of the ephemeral contract: ephemeral-contract.ts runs them on every
 * backend. Each is atomic across callers and instances.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it, type TestContext } from 'vitest';
import { NAMESPACES, type EphemeralStore } from '../../src/store/types.ts';

const CONCURRENCY = 20;

const key = (prefix = 'k') => `${prefix}-${randomBytes(6).toString('hex')}`;

export function purposesContract(
  getStore: () => EphemeralStore,
  withAnotherInstance: (ctx: TestContext, run: (other: EphemeralStore) => Promise<void>) => Promise<void>,
): void {
  describe('idempotency keys', () => {
    it(`lets exactly one of ${CONCURRENCY} concurrent callers claim a key, across instances, and keeps what it stored`, (ctx) =>
      withAnotherInstance(ctx, async (other) => {
        const claimed = key('idem');
        const results = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => (i % 2 === 0 ? getStore() : other).idempotencyKeys.claim(claimed, { n: i }, 60)));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect(await getStore().get(NAMESPACES.adminIdempotency, claimed)).toEqual({ n: results.indexOf(true) });
      }));
  });

  describe('used TOTP codes', () => {
    it('claims a user\'s code of one time step only the first time; other steps and users are apart', async () => {
      const { usedTotpCodes } = getStore();
      const [user, other] = [key('user'), key('user')];
      expect(await usedTotpCodes.claim(user, 100, 60)).toBe(true);
      expect(await usedTotpCodes.claim(user, 100, 60)).toBe(false);
      expect(await usedTotpCodes.claim(user, 101, 60)).toBe(true);
      expect(await usedTotpCodes.claim(other, 100, 60)).toBe(true);
    });

    it(`lets exactly one of ${CONCURRENCY} concurrent callers claim`, async () => {
      const { usedTotpCodes } = getStore();
      const user = key('user');
      const results = await Promise.all(Array.from({ length: CONCURRENCY }, () => usedTotpCodes.claim(user, 7, 60)));
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('lets exactly one caller claim across instances', (ctx) =>
      withAnotherInstance(ctx, async (other) => {
        const user = key('user');
        const results = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => (i % 2 === 0 ? getStore() : other).usedTotpCodes.claim(user, 7, 60)));
        expect(results.filter(Boolean)).toHaveLength(1);
      }));
  });

  describe('rate counters', () => {
    it('count from one, per subject and window, by what is added', async () => {
      const { rates } = getStore();
      const [a, b] = [key(), key()];
      expect(await rates.add(a, 1, 60)).toBe(1);
      expect(await rates.add(a, 1, 60)).toBe(2);
      expect(await rates.add(b, 1, 60)).toBe(1);
      expect(await rates.add(a, 1, 60)).toBe(3);
      expect(await rates.add(a, 2, 60)).toBe(1);
      expect(await rates.add(b, 1, 60, 5)).toBe(6);
    });

    it(`count ${CONCURRENCY} concurrent additions exactly`, async () => {
      const { rates } = getStore();
      const k = key();
      const results = await Promise.all(Array.from({ length: CONCURRENCY }, () => rates.add(k, 1, 60)));
      expect([...results].sort((x, y) => x - y)).toEqual(Array.from({ length: CONCURRENCY }, (_, i) => i + 1));
    });

    it('start again from one once deleted', async () => {
      const store = getStore();
      const k = key();
      await store.rates.add(k, 1, 60);
      await store.rates.add(k, 1, 60);
      // The key the counters keep a subject's window under (purposes.ts).
      await store.delete(NAMESPACES.rate, `${k}:1`);
      expect(await store.rates.add(k, 1, 60)).toBe(1);
    });
  });

  describe('round trips', () => {
    it('finishes a trip once, returning it; the two legs are apart', async () => {
      const { roundTrips } = getStore();
      const k = key();
      await roundTrips.start('sign-in', k, { code: 'abc' }, 60);
      expect(await roundTrips.finish('sign-out', k)).toBeUndefined();
      expect(await roundTrips.finish('sign-in', k)).toEqual({ code: 'abc' });
      expect(await roundTrips.finish('sign-in', k)).toBeUndefined();
      expect(await roundTrips.finish('sign-in', key('missing'))).toBeUndefined();
    });

    it(`gives the trip to exactly one of ${CONCURRENCY} concurrent callers`, async () => {
      const { roundTrips } = getStore();
      const k = key();
      await roundTrips.start('sign-out', k, { state: 'xyz' }, 60);
      const results = await Promise.all(Array.from({ length: CONCURRENCY }, () => roundTrips.finish('sign-out', k)));
      expect(results.filter((r) => r !== undefined)).toEqual([{ state: 'xyz' }]);
      expect(await roundTrips.finish('sign-out', k)).toBeUndefined();
    });

    it('gives the trip to exactly one caller across instances', (ctx) =>
      withAnotherInstance(ctx, async (other) => {
        const k = key();
        await getStore().roundTrips.start('sign-in', k, 'shared', 60);
        const results = await Promise.all(
          Array.from({ length: CONCURRENCY }, (_, i) => (i % 2 === 0 ? getStore() : other).roundTrips.finish('sign-in', k)),
        );
        expect(results.filter((r) => r !== undefined)).toEqual(['shared']);
      }));
  });

  describe('passkey challenges', () => {
    it('gives a challenge once; a newer one replaces the older', async () => {
      const { passkeyChallenges } = getStore();
      const k = key();
      await passkeyChallenges.issue(k, { challenge: 'first' }, 300);
      await passkeyChallenges.issue(k, { challenge: 'second' }, 300);
      expect(await passkeyChallenges.take(key('other'))).toBeUndefined();
      expect(await passkeyChallenges.take(k)).toEqual({ challenge: 'second' });
      expect(await passkeyChallenges.take(k)).toBeUndefined();
      expect(await getStore().get(NAMESPACES.passkeyChallenge, k)).toBeUndefined();
    });

    it('gives a challenge to exactly one caller across instances', (ctx) =>
      withAnotherInstance(ctx, async (other) => {
        const k = key();
        await other.passkeyChallenges.issue(k, 'shared', 300);
        const results = await Promise.all(
          Array.from({ length: CONCURRENCY }, (_, i) => (i % 2 === 0 ? getStore() : other).passkeyChallenges.take(k)),
        );
        expect(results.filter((r) => r !== undefined)).toEqual(['shared']);
      }));
  });
}
