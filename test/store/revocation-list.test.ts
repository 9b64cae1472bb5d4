/**
 * The revocation list of access tokens on both backends: what one instance revokes, every
 * instance refuses, from memory once it listens; a list that is not listening yet, or that grew
 * past what it keeps in memory, asks the store.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryEphemeralStore } from '../../src/store/ephemeral/memory.ts';
import { createRedisEphemeralStore } from '../../src/store/ephemeral/redis.ts';
import type { EphemeralStore } from '../../src/store/types.ts';
import { createRevocationList, type RevocationList } from '../../src/tokens/revocation.ts';
import { REDIS_URL, redisAvailable, redisPrefix } from '../helpers/services.ts';

const soon = () => Math.floor(Date.now() / 1000) + 300;
const until = async (done: () => Promise<boolean>, ms = 2000) => {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

interface Backend {
  open(): EphemeralStore;
  /** Removes the stored record of a revocation behind the lists' backs. */
  forget(jti: string): Promise<void>;
  cleanup(): Promise<void>;
}

function redisBackend(): Backend {
  const keyPrefix = redisPrefix();
  const stores: EphemeralStore[] = [];
  const raw = new Redis(REDIS_URL, { lazyConnect: true });
  return {
    open() {
      const store = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix });
      stores.push(store);
      return store;
    },
    async forget(jti) {
      await raw.del(`${keyPrefix}revoked-jti:{${jti}}`);
    },
    async cleanup() {
      await Promise.all(stores.map((s) => s.close()));
      const keys = await raw.keys(`${keyPrefix}*`);
      if (keys.length > 0) await raw.del(...keys);
      raw.disconnect();
    },
  };
}

function memoryBackend(): Backend {
  const store = createMemoryEphemeralStore();
  return {
    open: () => store,
    forget: (jti) => store.delete('revoked-jti', jti),
    cleanup: () => store.close(),
  };
}

function revocationSuite(name: string, makeBackend: () => Backend): void {
  describe(`revocation list: ${name}`, () => {
    let backend: Backend;
    const lists: RevocationList[] = [];
    const list = (max?: number) => {
      const created = createRevocationList(backend.open(), Date.now, max);
      lists.push(created);
      return created;
    };
    /** A list that has heard a revocation of its own: it listens and its copy is rebuilt. */
    const ready = async (l: RevocationList) => {
      const probe = randomUUID();
      await l.revoke([{ jti: probe, exp: soon() }]);
      await backend.forget(probe);
      await until(() => l.isRevoked(probe));
    };

    beforeAll(() => {
      backend = makeBackend();
    });
    afterAll(async () => {
      for (const l of lists) l.close();
      await backend.cleanup();
    });

    it('refuses what it revoked, and only that', async () => {
      const a = list();
      const jti = randomUUID();
      expect(await a.isRevoked(jti)).toBe(false);
      await a.revoke([{ jti, exp: soon() }]);
      expect(await a.isRevoked(jti)).toBe(true);
      expect(await a.isRevoked(randomUUID())).toBe(false);
    });

    it('skips tokens expired already, and forgets a revocation once the token has expired', async () => {
      const a = list();
      const past = randomUUID();
      await a.revoke([{ jti: past, exp: Math.floor(Date.now() / 1000) - 1 }]);
      expect(await a.isRevoked(past)).toBe(false);
      const brief = randomUUID();
      await a.revoke([{ jti: brief, exp: Math.floor(Date.now() / 1000) + 2 }]);
      expect(await a.isRevoked(brief)).toBe(true);
      await until(async () => !(await a.isRevoked(brief)), 4000);
    });

    it('hears what another list (another instance, on a shared store) revokes, and answers from memory once listening', async () => {
      const a = list();
      const b = list();
      await ready(b);
      const jti = randomUUID();
      await a.revoke([{ jti, exp: soon() }]);
      await until(() => b.isRevoked(jti));
      // The stored record gone, B still refuses the token: its answer came from memory.
      await backend.forget(jti);
      expect(await b.isRevoked(jti)).toBe(true);
    });

    it('rebuilds its copy from the store when it starts listening: revocations from before it existed count', async () => {
      const before = list();
      const jti = randomUUID();
      await before.revoke([{ jti, exp: soon() }]);
      const late = list();
      await ready(late);
      await backend.forget(jti);
      expect(await late.isRevoked(jti)).toBe(true);
    });

    it('asks the store once it holds more than it keeps in memory', async () => {
      const small = list(2);
      await ready(small);
      const jtis = [randomUUID(), randomUUID(), randomUUID()];
      await small.revoke(jtis.map((jti) => ({ jti, exp: soon() })));
      for (const jti of jtis) expect(await small.isRevoked(jti)).toBe(true);
      // Asking the store: a record removed behind its back is no longer refused.
      await backend.forget(jtis[2]!);
      expect(await small.isRevoked(jtis[2]!)).toBe(false);
    });
  });
}

describe.runIf(redisAvailable)('Redis', () => {
  revocationSuite('Redis, each list on a store of its own', redisBackend);
});
revocationSuite('in-process store', memoryBackend);
