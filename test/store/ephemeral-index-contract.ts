/**
 * Indexes on an ephemeral backend (`index`/`unindex` writes, `indexed`), part of the ephemeral
 * contract (ephemeral-contract.ts runs them on every backend, a Redis Cluster included): members
 * written in batches with other values and by the delete-and-write step, each expiring on its
 * own, seen by every instance.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it, type TestContext } from 'vitest';
import type { EphemeralStore, EphemeralWrite, Namespace } from '../../src/store/types.ts';

const key = (prefix = 'k') => `${prefix}-${randomBytes(6).toString('hex')}`;
const NS = 'index-contract' as Namespace;
const VALUES = 'index-contract-values' as Namespace;
const add = (index: string, member: string, ttlSeconds = 60): EphemeralWrite => ({ op: 'index', ns: NS, key: index, member, ttlSeconds });
const drop = (index: string, member: string): EphemeralWrite => ({ op: 'unindex', ns: NS, key: index, member });

export function indexContract(
  getStore: () => EphemeralStore,
  advance: (ms: number) => Promise<void>,
  withAnotherInstance: (ctx: TestContext, run: (other: EphemeralStore) => Promise<void>) => Promise<void>,
): void {
  describe('indexes', () => {
    it('lists members written in one batch with other values, soonest expiry first, and keeps indexes apart', async () => {
      const store = getStore();
      const [index, other] = [key('index'), key('index')];
      await store.write([{ op: 'set', ns: VALUES, key: 'a', value: 1, ttlSeconds: 60 }, add(index, 'late', 120), add(index, 'early', 30), add(other, 'elsewhere')]);
      expect(await store.indexed(NS, index)).toEqual(['early', 'late']);
      expect(await store.indexed(NS, other)).toEqual(['elsewhere']);
      expect(await store.indexed(NS, key('index'))).toEqual([]);
      // Renewing a member moves its expiry; adding it again does not repeat it.
      await store.write([add(index, 'early', 300)]);
      expect(await store.indexed(NS, index)).toEqual(['late', 'early']);
    });

    it('removes members, alone or with a value in one batch, and an emptied index lists nothing', async () => {
      const store = getStore();
      const index = key('index');
      await store.write([add(index, 'one'), add(index, 'two')]);
      await store.write([{ op: 'delete', ns: VALUES, key: 'one' }, drop(index, 'one')]);
      expect(await store.indexed(NS, index)).toEqual(['two']);
      await store.write([drop(index, 'two')]);
      await store.write([drop(index, 'never there')]);
      expect(await store.indexed(NS, index)).toEqual([]);
    });

    it('makes the index writes of the outcome of a delete-and-write step only', async () => {
      const store = getStore();
      const [index, gone] = [key('index'), key('gone')];
      await store.write([add(index, 'old')]);
      await store.set(VALUES, 'there', 1, 60);
      expect(await store.deleteAndWrite(VALUES, 'there', { deleted: [drop(index, 'old'), add(index, 'new')], missing: [add(index, 'wrong')] })).toBe(true);
      expect(await store.indexed(NS, index)).toEqual(['new']);
      expect(await store.deleteAndWrite(VALUES, gone, { deleted: [add(index, 'wrong')], missing: [add(index, 'missed', 120)] })).toBe(false);
      expect(await store.indexed(NS, index)).toEqual(['new', 'missed']);
    });

    it('drops each member when it expires, and the index with its latest member', async () => {
      const store = getStore();
      const index = key('index');
      await store.write([add(index, 'short', 0.3), add(index, 'long', 0.6)]);
      expect(await store.indexed(NS, index)).toEqual(['short', 'long']);
      await advance(400);
      expect(await store.indexed(NS, index)).toEqual(['long']);
      await advance(300);
      expect(await store.indexed(NS, index)).toEqual([]);
    });

    it('shows every instance the members any instance wrote', (ctx) =>
      withAnotherInstance(ctx, async (other) => {
        const index = key('index');
        await getStore().write([add(index, 'here')]);
        await other.write([add(index, 'there')]);
        expect((await other.indexed(NS, index)).sort()).toEqual(['here', 'there']);
        await other.write([drop(index, 'here')]);
        expect(await getStore().indexed(NS, index)).toEqual(['there']);
      }));
  });
}
