/** argon2id hashing of user passwords, and the limit on how many run at once. */
import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { ARGON2_PARAMS, createConcurrencyLimit, hashPassword, needsRehash, verifyPassword } from '../../../src/sources/passwords.ts';

describe('passwords', () => {
  it('hashes with argon2id at the parameters of the day, and verifies only the right password', async () => {
    const stored = await hashPassword('a long enough passphrase');
    expect(stored).toMatch(new RegExp(`^\\$argon2id\\$v=19\\$m=${ARGON2_PARAMS.memoryCost},t=${ARGON2_PARAMS.timeCost},p=1\\$`));
    expect(needsRehash(stored)).toBe(false);
    expect(await verifyPassword(stored, 'a long enough passphrase')).toBe(true);
    expect(await verifyPassword(stored, 'another passphrase')).toBe(false);
    expect(await verifyPassword('not a hash', 'anything')).toBe(false);
  });

  it('answers each of many verifications asked at once rightly', async () => {
    const stored = await hashPassword('right');
    const results = await Promise.all(Array.from({ length: 3 * availableParallelism() }, (_, i) => verifyPassword(stored, i % 2 === 0 ? 'right' : 'wrong')));
    expect(results).toStrictEqual(results.map((_, i) => i % 2 === 0));
  });

  describe('createConcurrencyLimit', () => {
    it('keeps at most `limit` tasks in progress, starts them in order, and frees a slot on failure', async () => {
      const limit = createConcurrencyLimit(2);
      let inProgress = 0;
      let most = 0;
      const started: number[] = [];
      const task = (i: number) => limit(async () => {
        started.push(i);
        inProgress += 1;
        most = Math.max(most, inProgress);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inProgress -= 1;
        if (i === 1) throw new Error('task 1 fails');
        return i;
      });
      const outcomes = await Promise.allSettled([0, 1, 2, 3, 4, 5].map(task));
      expect(most).toBe(2);
      expect(started).toStrictEqual([0, 1, 2, 3, 4, 5]);
      expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toStrictEqual([0, 'failed', 2, 3, 4, 5]);
      // Every slot came back: two more run at once again.
      await Promise.all([task(6), task(7)]);
      expect(most).toBe(2);
    });
  });
});
