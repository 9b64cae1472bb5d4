/**
 * The ephemeral store contract on every backend: Redis (a key prefix of its own, removed after),
 * a real Redis Cluster of three masters (started once for the file: every multi-key operation
 * must keep to one hash slot there) and the in-process map with an injected clock.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryEphemeralStore } from '../../src/store/ephemeral/memory.ts';
import { codeKey } from '../../src/store/ephemeral/codes.ts';
import { createRedisEphemeralStore } from '../../src/store/ephemeral/redis.ts';
import type { CodeRecord } from '../../src/store/records.ts';
import { redisServersAvailable, startRedisCluster, type RedisClusterServers } from '../helpers/distributed.ts';
import { REDIS_URL, redisAvailable, redisPrefix } from '../helpers/services.ts';
import { ephemeralContract, ns, type OpenedEphemeralStore } from './ephemeral-contract.ts';

/** Deletes every key under `prefix`; returns how many there were. */
async function deleteKeys(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

async function openRedis(): Promise<OpenedEphemeralStore> {
  const keyPrefix = redisPrefix();
  const store = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix });
  expect(store.kind).toBe('redis');
  return {
    store,
    advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    openAnother: async () => createRedisEphemeralStore({ url: REDIS_URL, keyPrefix }),
    async cleanup() {
      await store.close();
      await deleteKeys(keyPrefix);
    },
  };
}

async function openMemory(): Promise<OpenedEphemeralStore> {
  let now = Date.UTC(2026, 10, 22, 12, 0, 0);
  const store = createMemoryEphemeralStore(() => now);
  expect(store.kind).toBe('memory');
  return {
    store,
    async advance(ms) {
      now += ms;
    },
    cleanup: () => store.close(),
  };
}

describe.runIf(redisAvailable)('Redis', () => {
  ephemeralContract('Redis', openRedis);

  it('keeps every key under its prefix, so that deleting the prefix leaves nothing behind', async () => {
    const keyPrefix = redisPrefix();
    const store = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix });
    const record: CodeRecord = { clientId: 'c', redirectUri: 'https://rp.example/cb', codeChallenge: 'x', userId: 'u', scopes: [], authTime: 0, amr: [], allowedScopes: [] };
    try {
      await store.set(ns('ns'), 'k', 'v', 60);
      await store.rates.add('n', 1, 60);
      const { code, write } = store.codes.create(record);
      await store.write([write]);
      await store.codes.redeem(code);
      await store.codes.redeem(code);
      await store.codes.recordIssued(code, { jti: 'j', accessExpiresAt: 1, familyId: null });
    } finally {
      await store.close();
    }
    // The value, the counter; a code's record, its use marker, a replay's mark and what its
    // first redemption issued.
    expect(await deleteKeys(keyPrefix)).toBe(6);
    expect(await deleteKeys(keyPrefix)).toBe(0);
  });

  it('keeps a code\'s keys where the release before the code store did, so that both redeem it once while they roll', async () => {
    const keyPrefix = redisPrefix();
    const store = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix });
    const raw = new Redis(REDIS_URL, { keyPrefix, maxRetriesPerRequest: 1 });
    const record: CodeRecord = { clientId: 'c', redirectUri: 'https://rp.example/cb', codeChallenge: 'x', userId: 'u', scopes: [], authTime: 0, amr: [], allowedScopes: [] };
    try {
      const { code, write } = store.codes.create(record);
      await store.write([write]);
      const h = codeKey(code);
      expect(JSON.parse((await raw.get(`code:{${h}}`)) ?? 'null')).toEqual(record);
      // The earlier release redeems first: it marks the code used, as its consume script did.
      expect(await raw.set(`code:{${h}}:used`, '1', 'PX', 60_000, 'NX')).toBe('OK');
      expect(await store.codes.redeem(code)).toEqual({ outcome: 'replayed', issued: undefined });
      // The mark that release's first use looks for once it has minted.
      expect(await raw.get(`code-reused:{${h}}`)).toBe('1');
      const issued = { jti: 'j', accessExpiresAt: 1, familyId: null };
      expect(await store.codes.recordIssued(code, issued)).toBe(true);
      expect(JSON.parse((await raw.get(`code-issued:{${h}}`)) ?? 'null')).toEqual(issued);
    } finally {
      raw.disconnect();
      await store.close();
      await deleteKeys(keyPrefix);
    }
  });
});

describe.runIf(redisAvailable)('Redis indexes', () => {
  it('keeps an index in one sorted set whose TTL follows its latest member, gone once empty', async () => {
    const keyPrefix = redisPrefix();
    const store = createRedisEphemeralStore({ url: REDIS_URL, keyPrefix });
    const raw = new Redis(REDIS_URL, { keyPrefix, maxRetriesPerRequest: 1 });
    const index = (member: string, ttlSeconds: number) => ({ op: 'index' as const, ns: ns('idx'), key: 'u', member, ttlSeconds });
    try {
      await store.write([index('a', 60), index('b', 120)]);
      expect(await raw.type('idx:{u}')).toBe('zset');
      expect(await raw.pttl('idx:{u}')).toBeGreaterThan(119_000);
      await store.write([{ op: 'unindex', ns: ns('idx'), key: 'u', member: 'b' }]);
      const pttl = await raw.pttl('idx:{u}');
      expect(pttl).toBeGreaterThan(59_000);
      expect(pttl).toBeLessThanOrEqual(60_000);
      await store.write([{ op: 'unindex', ns: ns('idx'), key: 'u', member: 'a' }]);
      expect(await raw.exists('idx:{u}')).toBe(0);
    } finally {
      raw.disconnect();
      await store.close();
      await deleteKeys(keyPrefix);
    }
  });
});

describe.runIf(redisServersAvailable)('Redis Cluster', () => {
  let cluster: Promise<RedisClusterServers> | undefined;
  afterAll(async () => {
    await (await cluster)?.stop();
  });
  ephemeralContract('Redis Cluster', async () => {
    const { url } = await (cluster ??= startRedisCluster(3));
    const keyPrefix = redisPrefix();
    const store = createRedisEphemeralStore({ url, keyPrefix });
    return {
      store,
      advance: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      openAnother: async () => createRedisEphemeralStore({ url, keyPrefix }),
      // The cluster goes away with the file.
      cleanup: () => store.close(),
    };
  });
});

describe('in-process memory', () => {
  ephemeralContract('memory', openMemory);
});
