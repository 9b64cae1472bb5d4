/**
 * Recovery codes in the durable store, part of the durable contract (durable-contract.ts runs it
 * on every backend): a set replaced whole, a code used up once however many callers send it at
 * once, and every factor of a user removed together (an administrator's reset).
 */
import { describe, expect, it } from 'vitest';
import type { DurableStore } from '../../src/store/types.ts';
import { sampleUser, uniqueId } from './durable-contract.ts';

const NAME = 'Recovery code';

export function recoveryCodesContract(getStore: () => DurableStore): void {
  describe('recovery codes', () => {
    const withUser = async () => {
      const user = sampleUser();
      await getStore().users.upsert(user);
      return user;
    };
    const hashes = (n: number) => Array.from({ length: n }, () => uniqueId('hash'));
    const codesOf = async (userId: string) => (await getStore().factors.listForUser(userId)).filter((f) => f.kind === 'recovery_code');

    it('replaces the whole set at once: the old codes stop working, the new ones are read with the user', async () => {
      const store = getStore();
      const user = await withUser();
      const first = hashes(10);
      const stored = await store.factors.replaceRecoveryCodes(user.id, first, NAME);
      expect(stored).toHaveLength(10);
      expect(stored.every((f) => f.kind === 'recovery_code' && f.name === NAME && f.userId === user.id && f.secretSealed === null && f.lastUsedAt === null)).toBe(true);
      expect((await store.users.getById(user.id))?.factors.filter((f) => f.kind === 'recovery_code')).toHaveLength(10);
      const second = hashes(10);
      await store.factors.replaceRecoveryCodes(user.id, second, NAME);
      expect(await codesOf(user.id)).toHaveLength(10);
      expect(await store.factors.consumeRecoveryCode(user.id, [first[0]!], new Date())).toBeUndefined();
      expect(await store.factors.consumeRecoveryCode(user.id, [second[0]!], new Date())).toEqual({ remaining: 9 });
    });

    it('writes nothing when a new set cannot be stored (a repeated hash, an unknown user)', async () => {
      const store = getStore();
      const user = await withUser();
      const kept = hashes(3);
      await store.factors.replaceRecoveryCodes(user.id, kept, NAME);
      const repeated = uniqueId('hash');
      await expect(store.factors.replaceRecoveryCodes(user.id, [repeated, repeated], NAME)).rejects.toThrow(/user_factors_secret_hash/);
      expect(await codesOf(user.id)).toHaveLength(3);
      expect(await store.factors.consumeRecoveryCode(user.id, [kept[1]!], new Date())).toEqual({ remaining: 2 });
      await expect(store.factors.replaceRecoveryCodes(uniqueId('missing'), hashes(2), NAME)).rejects.toThrow(/foreign key/);
    });

    it('uses a code up once, by any of its candidate hashes, and marks the rest of the set used', async () => {
      const store = getStore();
      const user = await withUser();
      const other = await withUser();
      const set = hashes(4);
      await store.factors.replaceRecoveryCodes(user.id, set, NAME);
      await store.factors.replaceRecoveryCodes(other.id, hashes(2), NAME);
      const at = new Date('2026-11-27T12:00:00.000Z');
      // Another user's code, and a hash of no code, match nothing.
      expect(await store.factors.consumeRecoveryCode(other.id, [set[0]!], at)).toBeUndefined();
      expect(await store.factors.consumeRecoveryCode(user.id, [uniqueId('hash')], at)).toBeUndefined();
      expect((await codesOf(user.id)).every((f) => f.lastUsedAt === null)).toBe(true);
      expect(await store.factors.consumeRecoveryCode(user.id, [uniqueId('hash'), set[2]!], at)).toEqual({ remaining: 3 });
      expect(await store.factors.consumeRecoveryCode(user.id, [set[2]!], at)).toBeUndefined();
      const left = await codesOf(user.id);
      expect(left).toHaveLength(3);
      expect(left.map((f) => f.lastUsedAt)).toEqual([at, at, at]);
      expect(await codesOf(other.id)).toHaveLength(2);
    });

    it('gives a code sent by many callers at once to exactly one', async () => {
      const store = getStore();
      const user = await withUser();
      const set = hashes(10);
      await store.factors.replaceRecoveryCodes(user.id, set, NAME);
      const results = await Promise.all(Array.from({ length: 8 }, () => store.factors.consumeRecoveryCode(user.id, [set[5]!], new Date())));
      expect(results.filter((r) => r !== undefined)).toEqual([{ remaining: 9 }]);
      expect(await codesOf(user.id)).toHaveLength(9);
    });

    it('removes every factor of a user at once, and of no one else', async () => {
      const store = getStore();
      const user = await withUser();
      const other = await withUser();
      await store.factors.add({ userId: user.id, kind: 'totp', name: 'Authenticator app', secretSealed: 'v1.sealed' });
      await store.factors.replaceRecoveryCodes(user.id, hashes(10), NAME);
      await store.factors.replaceRecoveryCodes(other.id, hashes(2), NAME);
      const removed = await store.factors.removeAllForUser(user.id);
      expect(removed.map((f) => f.kind).sort()).toEqual(['recovery_code', ...Array(9).fill('recovery_code'), 'totp'].sort());
      expect(await store.factors.listForUser(user.id)).toEqual([]);
      expect((await store.users.getById(user.id))?.factors).toEqual([]);
      expect(await store.factors.removeAllForUser(user.id)).toEqual([]);
      expect(await codesOf(other.id)).toHaveLength(2);
    });
  });
}
