/**
 * Passkeys as second factors (`DurableStore.factors`), part of the factors contract: a passkey
 * row keeps its credential, is found by its credential id, and its counter only moves forward,
 * in one statement, so that of two uses of one assertion (or of a cloned key) one wins.
 */
import { describe, expect, it } from 'vitest';
import type { FactorInput, PasskeyCredential } from '../../src/store/records.ts';
import type { DurableStore } from '../../src/store/types.ts';
import { sampleUser, uniqueId } from './durable-contract.ts';

export function passkeysContract(getStore: () => DurableStore): void {
  describe('passkeys', () => {
    const credential = (overrides: Partial<PasskeyCredential> = {}): PasskeyCredential => ({
      credentialId: uniqueId('cred'), publicKey: 'pQECAyYgASFYIA', signCount: 0, transports: ['internal', 'hybrid'],
      backupEligible: true, backedUp: false, aaguid: '00000000-0000-0000-0000-000000000000', ...overrides,
    });
    const withPasskey = async (overrides: Partial<PasskeyCredential> = {}) => {
      const user = sampleUser();
      await getStore().users.upsert(user);
      const input: FactorInput = { userId: user.id, kind: 'passkey', name: 'Laptop', secretSealed: null, passkey: credential(overrides) };
      const factor = await getStore().factors.add(input);
      return { user, input, factor: factor! };
    };

    it('keeps the credential, read with the user and found by its credential id', async () => {
      const store = getStore();
      const { user, input, factor } = await withPasskey({ signCount: 7 });
      expect(factor).toEqual({ ...input, id: expect.any(String), createdAt: expect.any(Date), lastUsedAt: null });
      expect((await store.users.getById(user.id))?.factors).toEqual([factor]);
      expect(await store.factors.findPasskey(input.passkey!.credentialId)).toEqual(factor);
      expect(await store.factors.findPasskey(uniqueId('missing'))).toBeUndefined();
      // Several passkeys per user; one credential id once over every user.
      const second = await store.factors.add({ ...input, name: 'Phone', passkey: credential() });
      expect(second?.name).toBe('Phone');
      const other = sampleUser();
      await store.users.upsert(other);
      // A credential id stored already: no row, no error (the registration says so to the person).
      expect(await store.factors.add({ ...input, userId: other.id })).toBeUndefined();
      expect((await store.factors.findPasskey(input.passkey!.credentialId))?.userId).toBe(user.id);
      await expect(store.factors.add({ ...input, passkey: undefined })).rejects.toThrow(/user_factors_passkey_credential/);
    });

    it('records a use only when the counter moves forward, once under concurrency', async () => {
      const store = getStore();
      const { user, factor } = await withPasskey({ signCount: 5 });
      const at = new Date('2026-11-27T12:00:00.000Z');
      expect(await store.factors.recordPasskeyUse(factor.id, { signCount: 5, backedUp: true, at })).toBe(false);
      expect(await store.factors.recordPasskeyUse(factor.id, { signCount: 3, backedUp: true, at })).toBe(false);
      expect(await store.factors.listForUser(user.id)).toEqual([factor]);
      const results = await Promise.all([6, 6, 6].map((signCount) => store.factors.recordPasskeyUse(factor.id, { signCount, backedUp: true, at })));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await store.factors.findPasskey(factor.passkey!.credentialId)).toEqual({ ...factor, lastUsedAt: at, passkey: { ...factor.passkey, signCount: 6, backedUp: true } });
    });

    it('takes every use of an authenticator that keeps no counter, and none that starts one lower', async () => {
      const store = getStore();
      const { factor } = await withPasskey({ signCount: 0 });
      const at = new Date();
      expect(await store.factors.recordPasskeyUse(factor.id, { signCount: 0, backedUp: false, at })).toBe(true);
      expect(await store.factors.recordPasskeyUse(factor.id, { signCount: 0, backedUp: false, at })).toBe(true);
      expect(await store.factors.recordPasskeyUse(factor.id, { signCount: 2, backedUp: false, at })).toBe(true);
      expect(await store.factors.recordPasskeyUse(factor.id, { signCount: 0, backedUp: false, at })).toBe(false);
    });

    it('removes a factor unless it is the user\'s last of the standing kinds, once under concurrency', async () => {
      const store = getStore();
      const { user, input, factor } = await withPasskey();
      const second = (await store.factors.add({ ...input, name: 'Phone', passkey: credential() }))!;
      await store.factors.replaceRecoveryCodes(user.id, ['hash-1'], 'Recovery code');
      const results = await Promise.all([factor, second].map((f) => store.factors.removeUnlessLast(user.id, f.id, ['totp', 'passkey'])));
      expect(results.sort()).toEqual(['last', 'removed']);
      const left = await store.factors.listForUser(user.id);
      expect(left.map((f) => f.kind).sort()).toEqual(['passkey', 'recovery_code']);
      expect(await store.factors.removeUnlessLast(user.id, left.find((f) => f.kind === 'passkey')!.id, ['passkey', 'recovery_code'])).toBe('removed');
      expect(await store.factors.removeUnlessLast(user.id, factor.id, ['passkey'])).toBe('not_found');
      expect(await store.factors.removeUnlessLast(sampleUser().id, second.id, ['passkey'])).toBe('not_found');
    });

    it('renames a passkey, and says when it is gone', async () => {
      const store = getStore();
      const { factor } = await withPasskey();
      expect(await store.factors.rename(factor.id, 'Work key')).toBe(true);
      expect((await store.factors.findPasskey(factor.passkey!.credentialId))?.name).toBe('Work key');
      await expect(store.factors.rename(factor.id, '')).rejects.toThrow(/user_factors_name_length/);
      expect(await store.factors.remove(factor.id)).toBe(true);
      expect(await store.factors.rename(factor.id, 'Gone')).toBe(false);
      expect(await store.factors.findPasskey(factor.passkey!.credentialId)).toBeUndefined();
    });
  });
}
