/**
 * The revocation list of access tokens on both pairs of backends (Redis with PostgreSQL, the
 * in-process store with PGlite): what one instance revokes, every instance refuses, from memory
 * once its copy is rebuilt; the durable record outlives Redis losing its data and reaches a list
 * started afterwards; a revocation written to the database alone (as `idp users` does) reaches
 * every list; a list whose copy is not complete (starting, or grown past what it keeps in
 * memory) asks the durable record.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEphemeralStore } from '../../src/store/ephemeral/memory.ts';
import { createRedisEphemeralStore } from '../../src/store/ephemeral/redis.ts';
import { openDurableStore } from '../../src/store/sql/durable.ts';
import type { DurableStore, EphemeralStore } from '../../src/store/types.ts';
import { createRevocationList, type RevocationList } from '../../src/tokens/revocation-list.ts';
import { REDIS_URL, createTestDatabase, postgresAvailable, redisAvailable, redisPrefix, runSql } from '../helpers/services.ts';

const soon = () => Math.floor(Date.now() / 1000) + 300;
const until = async (done: () => Promise<boolean>, ms = 2000) => {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

interface Backend {
  /** The stores of one more instance. */
  open(): Promise<{ ephemeral: EphemeralStore; durable: DurableStore }>;
  /** Removes the durable record of a revocation behind the lists' backs. */
  forget(jti: string): Promise<void>;
  /** Every value in the ephemeral store gone, as after a Redis restart without persistence. */
  flushEphemeral(): Promise<void>;
  cleanup(): Promise<void>;
}

async function redisPostgresBackend(): Promise<Backend> {
  const keyPrefix = redisPrefix();
  const database = await createTestDatabase();
  const first = await openDurableStore({ databaseUrl: database.url });
  await first.migrate();
  const opened: Array<{ close(): Promise<void> }> = [first];
  const raw = new Redis(REDIS_URL, { lazyConnect: true });
  return {
    async open() {
      const ephemeral = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix });
      const durable = await openDurableStore({ databaseUrl: database.url });
      opened.push(ephemeral, durable);
      return { ephemeral, durable };
    },
    async forget(jti) {
      await runSql(database.url, 'DELETE FROM revocations WHERE jti = $1', [jti]);
    },
    async flushEphemeral() {
      const keys = await raw.keys(`${keyPrefix}*`);
      if (keys.length > 0) await raw.del(...keys);
    },
    async cleanup() {
      await Promise.all(opened.map((s) => s.close().catch(() => {})));
      const keys = await raw.keys(`${keyPrefix}*`);
      if (keys.length > 0) await raw.del(...keys);
      raw.disconnect();
      await database.drop();
    },
  };
}

async function memoryPgliteBackend(): Promise<Backend> {
  const ephemeral = createMemoryEphemeralStore();
  const durable = await openDurableStore({});
  await durable.migrate();
  return {
    open: async () => ({ ephemeral, durable }),
    forget: (jti) => deleteRecord(durable, jti),
    async flushEphemeral() {
      for (const [key] of await ephemeral.entries('revoked-jti')) await ephemeral.delete('revoked-jti', key);
    },
    async cleanup() {
      await ephemeral.close();
      await durable.close();
    },
  };
}

/**
 * The durable record of one revocation deleted, where no SQL connection but the store's own can
 * reach the database (PGlite): purging "as of" the far future removes every record, and all but
 * the forgotten one are put back.
 */
async function deleteRecord(store: DurableStore, jti: string): Promise<void> {
  const far = new Date(Date.now() + 10 * 365 * 86_400_000);
  const kept = (await store.revocations.live(new Date(), 1_000_000)).filter((r) => r.key !== jti);
  await store.transaction(async (tx) => {
    await tx.revocations.purgeExpired(far, 1_000_000);
    await tx.revocations.add(kept, new Date());
  });
}

function revocationSuite(name: string, makeBackend: () => Promise<Backend>): void {
  describe(`revocation list: ${name}`, () => {
    let backend: Backend;
    const lists: RevocationList[] = [];
    const list = async (max?: number) => {
      const created = createRevocationList(await backend.open(), Date.now, max);
      lists.push(created);
      return created;
    };
    /** A list whose copy is rebuilt: it answers from memory. */
    const ready = async (l: RevocationList) => {
      const probe = randomUUID();
      await l.revoke([{ jti: probe, exp: soon() }]);
      await backend.forget(probe);
      await until(() => l.isRevoked(probe));
    };

    beforeAll(async () => {
      backend = await makeBackend();
    });
    afterAll(async () => {
      for (const l of lists) l.close();
      await backend?.cleanup();
    });

    it('refuses what it revoked, and only that', async () => {
      const a = await list();
      const jti = randomUUID();
      expect(await a.isRevoked(jti)).toBe(false);
      await a.revoke([{ jti, exp: soon() }]);
      expect(await a.isRevoked(jti)).toBe(true);
      expect(await a.isRevoked(randomUUID())).toBe(false);
    });

    it('skips tokens expired already, and forgets a revocation once the token has expired', async () => {
      const a = await list();
      const past = randomUUID();
      await a.revoke([{ jti: past, exp: Math.floor(Date.now() / 1000) - 1 }]);
      expect(await a.isRevoked(past)).toBe(false);
      const brief = randomUUID();
      await a.revoke([{ jti: brief, exp: Math.floor(Date.now() / 1000) + 2 }]);
      expect(await a.isRevoked(brief)).toBe(true);
      await until(async () => !(await a.isRevoked(brief)), 4000);
    });

    it('hears what another list (another instance, on a shared store) revokes, and answers from memory once listening', async () => {
      const a = await list();
      const b = await list();
      await ready(b);
      const jti = randomUUID();
      await a.revoke([{ jti, exp: soon() }]);
      await until(() => b.isRevoked(jti));
      // The durable record gone, B still refuses the token: its answer came from memory.
      await backend.forget(jti);
      expect(await b.isRevoked(jti)).toBe(true);
    });

    it('rebuilds its copy from the durable record at start: revocations from before it existed count', async () => {
      const before = await list();
      const jti = randomUUID();
      await before.revoke([{ jti, exp: soon() }]);
      const late = await list();
      await ready(late);
      await backend.forget(jti);
      expect(await late.isRevoked(jti)).toBe(true);
    });

    it('keeps revocations when the ephemeral store loses its data: a list started afterwards refuses them', async () => {
      const before = await list();
      const jti = randomUUID();
      await before.revoke([{ jti, exp: soon() }]);
      await backend.flushEphemeral();
      const after = await list();
      await ready(after);
      expect(await after.isRevoked(jti)).toBe(true);
      expect(await before.isRevoked(jti)).toBe(true);
    });

    it('hears a revocation written to the database alone (as the command line does), and a user\'s revocation', async () => {
      const a = await list();
      await ready(a);
      const { durable } = await backend.open();
      const jti = randomUUID();
      await durable.revocations.add([{ key: jti, expiresAt: new Date(soon() * 1000) }], new Date());
      await until(() => a.isRevoked(jti));
      await backend.forget(jti);
      expect(await a.isRevoked(jti)).toBe(true);
    });

    it('makes durable the revocations an earlier version kept in the ephemeral store only', async () => {
      const { ephemeral, durable } = await backend.open();
      const jti = randomUUID();
      await ephemeral.set('revoked-jti', jti, soon(), 300);
      const upgraded = await list();
      await ready(upgraded);
      expect(await upgraded.isRevoked(jti)).toBe(true);
      expect(await durable.revocations.isRevoked(jti, new Date())).toBe(true);
    });

    it('asks the durable record once it holds more than it keeps in memory', async () => {
      // The record holds more than two already (the earlier tests'): the copy never completes.
      const small = await list(2);
      const jtis = [randomUUID(), randomUUID(), randomUUID()];
      await small.revoke(jtis.map((jti) => ({ jti, exp: soon() })));
      for (const jti of jtis) expect(await small.isRevoked(jti)).toBe(true);
      // Asking the durable record: one removed behind its back is no longer refused.
      await backend.forget(jtis[2]!);
      expect(await small.isRevoked(jtis[2]!)).toBe(false);
    });
  });
}

describe.runIf(redisAvailable && postgresAvailable)('Redis and PostgreSQL', () => {
  revocationSuite('Redis and PostgreSQL, each list on connections of its own', redisPostgresBackend);
});
revocationSuite('in-process store and PGlite', memoryPgliteBackend);
