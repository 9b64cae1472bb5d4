/**
 * The shared ephemeral store on Redis (ioredis). Every operation is one command or one Lua
 * script, so it is atomic across instances. Keys are `{prefix}{ns}:{key}`.
 */
import { Cluster, Redis, type ChainableCommander, type RedisOptions } from 'ioredis';
import type { ChannelListener, EphemeralStore, EphemeralWrite, Namespace } from '../types.ts';
import { createCodeStore } from './codes.ts';
import { redisCodeSteps } from './redis-codes.ts';
import { defineScript } from './redis-scripts.ts';
import { parseRedisUrl } from './redis-url.ts';

export { describeRedisTarget, parseRedisUrl, type RedisTarget } from './redis-url.ts';

const INCREMENT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
`;

// The attempts at one thing, one hash: n = attempts counted, until = locked until (ms of Redis's
// own clock, so that instances with skewed clocks agree), by = the count that set the lock.
// ARGV: limit, window, first lock and longest lock (ms). Returns 1 when the attempt is taken.
// (replicate_commands: before Redis 5, a script that reads TIME may write only when replicated by
// its effects; from 7.0 on it is always so, and the call does nothing.)
const TAKE_ATTEMPT = `
redis.replicate_commands()
local limit, window, lock, maxLock = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if tonumber(redis.call('HGET', KEYS[1], 'until') or '0') > now then return 0 end
local n = redis.call('HINCRBY', KEYS[1], 'n', 1)
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n >= limit then
  local ms = math.floor(math.min(lock * 2 ^ (n - limit), maxLock))
  redis.call('HSET', KEYS[1], 'until', string.format('%.0f', now + ms), 'by', n)
  if redis.call('PTTL', KEYS[1]) < ms then redis.call('PEXPIRE', KEYS[1], string.format('%.0f', ms)) end
end
return 1
`;

// Uncounts one attempt; a lock set by a count that included it goes with it.
const GIVE_BACK_ATTEMPT = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = redis.call('HINCRBY', KEYS[1], 'n', -1)
if n < 0 then
  redis.call('HSET', KEYS[1], 'n', 0)
  n = 0
end
if tonumber(redis.call('HGET', KEYS[1], 'by') or '0') > n then redis.call('HDEL', KEYS[1], 'until', 'by') end
return 1
`;

export interface RedisEphemeralOptions {
  url: string;
  /** Prefix for every key, so that tests and deployments can share one Redis. */
  keyPrefix?: string;
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
  const keyPrefix = options.keyPrefix ?? 'idp:';
  const redis = connect(options.url, {
    keyPrefix,
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
  const inOneWrite = redis instanceof Cluster ? () => redis : coalescedWrites(redis);
  const scripts = {
    increment: defineScript(redis, inOneWrite, 'idpIncrement', 1, INCREMENT),
    takeAttempt: defineScript(redis, inOneWrite, 'idpTakeAttempt', 1, TAKE_ATTEMPT),
    giveBackAttempt: defineScript(redis, inOneWrite, 'idpGiveBackAttempt', 1, GIVE_BACK_ATTEMPT),
  };

  // The braces are a cluster hash tag: the keys of one code (redis-codes.ts) live in one slot.
  const k = (ns: Namespace, key: string) => `${ns}:{${key}}`;
  const parse = <T>(json: string | null): T | undefined => (json === null ? undefined : (JSON.parse(json) as T));

  const px = (ttlSeconds: number) => Math.max(1, Math.round(ttlSeconds * 1000));
  /** Adds one write to a MULTI. */
  const queue = (batch: ChainableCommander, w: EphemeralWrite): ChainableCommander => (w.op === 'set'
    ? batch.set(k(w.ns, w.key), JSON.stringify(w.value), 'PX', px(w.ttlSeconds))
    : batch.del(k(w.ns, w.key)));
  /** Sends one write as one command. */
  const apply = async (w: EphemeralWrite): Promise<void> => {
    if (w.op === 'set') await inOneWrite().set(k(w.ns, w.key), JSON.stringify(w.value), 'PX', px(w.ttlSeconds));
    else await inOneWrite().del(k(w.ns, w.key));
  };
  return {
    kind: 'redis',
    codes: createCodeStore(redisCodeSteps(redis, inOneWrite, k)),
    async set(ns, key, value, ttlSeconds) {
      await apply({ op: 'set', ns, key, value, ttlSeconds });
    },
    async write(writes) {
      // A cluster runs a MULTI within one hash slot only: there, each write goes on its own. One
      // write needs no MULTI.
      if (redis instanceof Cluster || writes.length <= 1) await Promise.all(writes.map(apply));
      else await writes.reduce(queue, inOneWrite().multi()).exec();
    },
    async setIfAbsent(ns, key, value, ttlSeconds) {
      const ok = await inOneWrite().set(k(ns, key), JSON.stringify(value), 'PX', px(ttlSeconds), 'NX');
      return ok === 'OK';
    },
    async get<T>(ns: Namespace, key: string) {
      return parse<T>(await inOneWrite().get(k(ns, key)));
    },
    async getMany(keys) {
      const names = keys.map(({ ns, key }) => k(ns, key));
      // MGET spans hash slots only outside a cluster.
      const values = redis instanceof Cluster ? await Promise.all(names.map((name) => redis.get(name))) : await inOneWrite().mget(names);
      return values.map((value) => parse<unknown>(value ?? null));
    },
    async take<T>(ns: Namespace, key: string) {
      return parse<T>(await inOneWrite().getdel(k(ns, key)));
    },
    async increment(ns, key, ttlSeconds, by = 1) {
      return Number(await scripts.increment([k(ns, key)], [String(Math.max(1, Math.ceil(ttlSeconds))), String(by)]));
    },
    async takeAttempt(ns, key, rule) {
      const ms = (seconds: number) => String(px(seconds));
      const args = [String(rule.limit), ms(rule.windowSeconds), ms(rule.lockSeconds), ms(rule.maxLockSeconds)];
      return Number(await scripts.takeAttempt([k(ns, key)], args)) === 1;
    },
    async giveBackAttempt(ns, key) {
      await scripts.giveBackAttempt([k(ns, key)], []);
    },
    async delete(ns, key) {
      await inOneWrite().del(k(ns, key));
    },
    async entries<T>(ns: Namespace) {
      // SCAN matches whole key names: the prefix is not added for us, and is taken off again.
      const names = await scanKeys(redis, `${keyPrefix}${ns}:{*}`);
      const keys = names.map((name) => name.slice(keyPrefix.length));
      const found: Array<[string, T]> = [];
      for (let i = 0; i < keys.length; i += 500) {
        const batch = keys.slice(i, i + 500);
        // One GET per key, not MGET: each key is its own cluster hash slot.
        const values = await Promise.all(batch.map((key) => inOneWrite().get(key)));
        batch.forEach((key, j) => {
          const value = values[j];
          if (value !== null && value !== undefined) found.push([key.slice(ns.length + 2, -1), JSON.parse(value) as T]);
        });
      }
      return found;
    },
    async publish(channel, message) {
      await inOneWrite().publish(`${keyPrefix}${channel}`, message);
    },
    subscribe(channel, listener) {
      return subscribeChannel(redis, `${keyPrefix}${channel}`, listener);
    },
    async ping() {
      await inOneWrite().ping();
    },
    connected: () => redis.status === 'ready',
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * Commands sent within one turn of the event loop leave in one write, in the order they were
 * made: the socket is corked at the first and uncorked by a setImmediate callback, once the
 * turn's I/O callbacks (every request that arrived) have run. Under load, the commands of many
 * requests then cost one system call, and Redis one read and one wake-up, instead of one each
 * (uncorking at the end of each tick instead, as before, cost a write per request: a third of
 * the code exchange's main-thread time, measured). Each command still has its own timeout
 * (autopipelining would not keep it, see the connection's options).
 */
function coalescedWrites(redis: Redis): () => Redis {
  let corked: Redis['stream'] | undefined;
  const uncork = () => {
    corked?.uncork();
    corked = undefined;
  };
  return () => {
    if (!corked && redis.status === 'ready' && redis.stream.writable) {
      corked = redis.stream;
      corked.cork();
      setImmediate(uncork);
    }
    return redis;
  };
}

/** Every key name matching `pattern`, on every master of a cluster. */
async function scanKeys(redis: Redis | Cluster, pattern: string): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const names = new Set<string>();
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, batch] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      for (const name of batch) names.add(name);
      cursor = next;
    } while (cursor !== '0');
  }
  return [...names];
}

/**
 * A connection of its own in subscriber mode (a subscribed connection can do nothing else).
 * It reconnects by itself; each time it is ready it subscribes again and says so.
 */
function subscribeChannel(redis: Redis | Cluster, channel: string, listener: ChannelListener): () => void {
  const subscriber: Redis | Cluster = redis instanceof Cluster ? redis.duplicate() : redis.duplicate();
  let stopped = false;
  subscriber.on('error', () => {});
  subscriber.on('message', (from: string, message: string) => {
    // Unsubscribing takes a round trip (longer on a cluster): nothing reaches a stopped listener.
    if (from === channel && !stopped) listener.message(message);
  });
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).then(
      () => !stopped && listener.listening(true),
      () => subscriber.disconnect(true),
    );
  });
  subscriber.on('close', () => !stopped && listener.listening(false));
  return () => {
    stopped = true;
    void subscriber.quit().catch(() => subscriber.disconnect());
  };
}
