/**
 * Second factors (`DurableStore.factors`), part of the durable contract: every backend runs it
 * from durable-contract.ts. A user is read with their factors, and a change of factors is
 * announced as a change of the user, so that cached users drop them on every instance.
 */
import { describe, expect, it } from 'vitest';
import type { FactorInput, FactorRecord } from '../../src/store/records.ts';
import type { DurableStore } from '../../src/store/types.ts';
import { recordChanges, sampleUser, uniqueId } from './durable-contract.ts';
import { passkeysContract } from './passkeys-contract.ts';

const violates = (constraint: string) => new RegExp(`violates check constraint "${constraint}"`);

export function factorsContract(getStore: () => DurableStore): void {
  describe('second factors', () => {
    const withUser = async () => {
      const user = sampleUser();
      await getStore().users.upsert(user);
      return user;
    };
    const totp = (userId: string): FactorInput => ({ userId, kind: 'totp', name: 'Authenticator app', secretSealed: `v1.${uniqueId('sealed')}` });

    it('reads a user with their factors, oldest first, by every lookup', async () => {
      const store = getStore();
      const user = await withUser();
      const app = await store.factors.add(totp(user.id));
      const [code] = await store.factors.replaceRecoveryCodes(user.id, [uniqueId('hash')], 'Recovery code');
      expect(app).toEqual({ ...totp(user.id), id: expect.any(String), secretSealed: app?.secretSealed, createdAt: expect.any(Date), lastUsedAt: null });
      const factors = [app, code];
      expect(await store.factors.listForUser(user.id)).toEqual(factors);
      expect((await store.users.getById(user.id))?.factors).toEqual(factors);
      expect((await store.users.getByUsername('local', user.username))?.factors).toEqual(factors);
      expect((await store.users.getBySubject('local', user.subject))?.factors).toEqual(factors);
      expect((await store.users.list()).find((u) => u.id === user.id)?.factors).toEqual(factors);
      expect(await store.factors.listForUser(uniqueId('missing'))).toEqual([]);
    });

    it('keeps one authenticator app per user, and refuses a factor the table does not allow', async () => {
      const store = getStore();
      const user = await withUser();
      const first = await store.factors.add(totp(user.id));
      expect(await store.factors.add(totp(user.id))).toBeUndefined();
      await expect(store.factors.add({ ...totp(user.id), kind: 'totp', secretSealed: null })).rejects.toThrow(violates('user_factors_totp_secret'));
      await expect(store.factors.add({ ...totp(user.id), kind: 'sms' as never })).rejects.toThrow(violates('user_factors_kind'));
      await expect(store.factors.add({ ...totp(user.id), kind: 'passkey', name: '' })).rejects.toThrow(violates('user_factors_name_length'));
      // A recovery code is typed and found by its keyed hash: without one it could never be used.
      await expect(store.factors.add({ ...totp(user.id), kind: 'recovery_code', secretSealed: null })).rejects.toThrow(violates('user_factors_recovery_code_hash'));
      await expect(store.factors.add(totp(uniqueId('missing')))).rejects.toThrow(/foreign key/);
      expect(await store.factors.listForUser(user.id)).toEqual([first]);
    });

    it('records a use, reseals a secret, and removes a factor once', async () => {
      const store = getStore();
      const user = await withUser();
      const app = (await store.factors.add(totp(user.id)))!;
      const at = new Date('2026-11-27T10:00:00.000Z');
      await store.factors.touch(app.id, at);
      await store.factors.reseal(app.id, 'v1.resealed');
      expect(await store.factors.listForUser(user.id)).toEqual([{ ...app, lastUsedAt: at, secretSealed: 'v1.resealed' }]);
      expect(await store.factors.remove(app.id)).toBe(true);
      expect(await store.factors.remove(app.id)).toBe(false);
      expect((await store.users.getById(user.id))?.factors).toEqual([]);
      // With the app gone, the user may enrol one again.
      expect(await store.factors.add(totp(user.id))).toBeDefined();
    });

    it('removes the factors of a removed user', async () => {
      const store = getStore();
      const user = await withUser();
      await store.factors.add(totp(user.id));
      expect(await store.users.remove(user.id)).toBe(true);
      expect(await store.factors.listForUser(user.id)).toEqual([]);
    });

    it('announces an added, resealed or removed factor as a change of its user; a recorded use is not', async () => {
      const store = getStore();
      const user = await withUser();
      const app = (await store.factors.add(totp(user.id)))!;
      let code: FactorRecord | undefined;
      const changes = [
        async () => { [code] = await store.factors.replaceRecoveryCodes(user.id, [uniqueId('hash')], 'Recovery code'); },
        () => store.factors.reseal(app.id, 'v1.other'),
        () => store.factors.remove(app.id),
      ];
      for (const change of changes) {
        const feed = recordChanges(store);
        try {
          await change();
          const { elapsed } = await feed.waitFor((e) => e.kind === 'user' && e.userId === user.id);
          expect(elapsed).toBeLessThan(1000);
        } finally {
          feed.stop();
        }
      }
      const other = await withUser();
      const feed = recordChanges(store);
      try {
        await store.factors.touch(code!.id, new Date());
        // Notices arrive in commit order: once the later change is in, the touch would be too.
        await store.factors.add(totp(other.id));
        await feed.waitFor((e) => e.kind === 'user' && e.userId === other.id);
        expect(feed.events.filter((e) => e.kind === 'user' && e.userId === user.id)).toEqual([]);
      } finally {
        feed.stop();
      }
    });
    passkeysContract(getStore);
  });
}
