/**
 * The shared ephemeral store on Redis (ioredis). Every operation is one command or one Lua
 * script, so it is atomic across instances. Keys are `{prefix}{ns}:{key}`.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Consumed, EphemeralStore } from '../types.ts';

// Returns the value and 1 when this call marked it used first, 0 when it was used before.
const CONSUME = `
local v = redis.call('GET', KEYS[1])
if not v then return nil end
local ttl = redis.call('PTTL', KEYS[1])
local first = redis.call('SET', KEYS[2], '1', 'NX', 'PX', math.max(ttl, 1))
if first then return {v, 1} end
return {v, 0}
`;

const INCREMENT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
`;

export interface RedisEphemeralOptions {
  url: string;
  /** Prefix for every key, so that tests and deployments can share one Redis. */
  keyPrefix?: string;
}

export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'sentinel' | 'cluster'; nodes: Array<{ host: string; port: number }>; master: string; db: number; password: string | undefined };

/**
 * redis://, rediss:// (TLS), redis+sentinel://[:password@]host:port[,host:port...]/master[/db]
 * and redis+cluster://[:password@]host:port[,host:port...].
 */
export function parseRedisUrl(url: string): RedisTarget {
  const match = /^redis\+(sentinel|cluster):\/\/(?:[^:@/]*:([^@/]*)@)?([^/]+)(?:\/([^/]+))?(?:\/(\d+))?$/.exec(url);
  if (!match) return { kind: 'single', url };
  const [, kind = 'sentinel', password, hosts = '', master, db] = match;
  const nodes = hosts.split(',').map((h) => {
    const [host = 'localhost', port = kind === 'sentinel' ? '26379' : '6379'] = h.split(':');
    return { host, port: Number(port) };
  });
  return {
    kind: kind as 'sentinel' | 'cluster',
    nodes,
    master: master ?? 'mymaster',
    db: db ? Number(db) : 0,
    password: password ? decodeURIComponent(password) : undefined,
  };
}

function connect(url: string, options: RedisOptions): Redis | Cluster {
  const target = parseRedisUrl(url);
  if (target.kind === 'single') return new Redis(url, options);
  if (target.kind === 'cluster') {
    return new Cluster(target.nodes, { redisOptions: { ...options, password: target.password }, keyPrefix: options.keyPrefix });
  }
  return new Redis({ ...options, sentinels: target.nodes, name: target.master, password: target.password, db: target.db });
}

export function createRedisEphemeralStore(options: RedisEphemeralOptions): EphemeralStore {
  const redis = connect(options.url, {
    keyPrefix: options.keyPrefix ?? 'idp:',
    // Fail fast while Redis is away (503 to the caller): a command waits at most commandTimeout,
    // queued or sent; the connection itself keeps reconnecting in the background.
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: 2000,
    commandTimeout: 2000,
    retryStrategy: (times: number) => Math.min(times * 100, 2000),
    lazyConnect: false,
    // Not enableAutoPipelining: auto-pipelined commands outlive commandTimeout while Redis is
    // away (a code exchange took 3.6 s instead of failing within 2 s; test/e2e/outages.test.ts).
  });
  // Errors surface on the commands that fail; the connection itself reconnects by itself.
  redis.on('error', () => {});

  // The braces are a cluster hash tag: a value and its `:used` marker live in one slot.
  const k = (ns: string, key: string) => `${ns}:{${key}}`;
  const parse = <T>(json: string | null): T | undefined => (json === null ? undefined : (JSON.parse(json) as T));

  return {
    kind: 'redis',
    async set(ns, key, value, ttlSeconds) {
      // A value set anew starts unused, as in the in-process store.
      await redis.multi().set(k(ns, key), JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlSeconds * 1000))).del(`${k(ns, key)}:used`).exec();
    },
    async setIfAbsent(ns, key, value, ttlSeconds) {
      const ok = await redis.set(k(ns, key), JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlSeconds * 1000)), 'NX');
      return ok === 'OK';
    },
    async get<T>(ns: string, key: string) {
      return parse<T>(await redis.get(k(ns, key)));
    },
    async take<T>(ns: string, key: string) {
      const [taken] = (await redis.multi().getdel(k(ns, key)).del(`${k(ns, key)}:used`).exec()) ?? [];
      return parse<T>((taken?.[1] as string | null | undefined) ?? null);
    },
    async consume<T>(ns: string, key: string): Promise<Consumed<T> | undefined> {
      const result = (await redis.eval(CONSUME, 2, k(ns, key), `${k(ns, key)}:used`)) as [string, number] | null;
      if (!result) return undefined;
      return { value: JSON.parse(result[0]) as T, firstUse: result[1] === 1 };
    },
    async increment(ns, key, ttlSeconds, by = 1) {
      return Number(await redis.eval(INCREMENT, 1, k(ns, key), String(Math.max(1, Math.ceil(ttlSeconds))), String(by)));
    },
    async delete(ns, key) {
      await redis.del(k(ns, key), `${k(ns, key)}:used`);
    },
    async ping() {
      await redis.ping();
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
