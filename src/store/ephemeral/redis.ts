/**
 * The shared ephemeral store on Redis (ioredis). Every operation is one command or one Lua
 * script, so it is atomic across instances. Keys are `{prefix}{ns}:{key}`.
 */
import { Cluster, Redis, type ChainableCommander, type RedisOptions } from 'ioredis';
import type { ChannelListener, EphemeralStore, EphemeralWrite, Namespace } from '../types.ts';
import { createCodeStore } from './codes.ts';
import { redisAttemptSteps } from './redis-attempts.ts';
import { redisCodeSteps } from './redis-codes.ts';
import { createAttempts, createIdempotencyKeys, createPasskeyChallenges, createRateCounters, createRoundTrips, createUsedTotpCodes, type KeySteps } from './purposes.ts';
import { defineScript, px } from './redis-scripts.ts';
import { INDEX_FUNCTION, indexArguments, redisIndexes } from './redis-index.ts';
import { parseRedisUrl } from './redis-url.ts';

export { describeRedisTarget, parseRedisUrl, type RedisTarget } from './redis-url.ts';

const INCREMENT = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n
`;

// KEYS[1]: the value deleted; then the keys of the writes, those made when it was there first.
// ARGV[1]: how many writes are made when it was there; then two per write, in the order of the
// keys: the JSON to set and its TTL (ms), or two empty strings to delete, or an index's member
// and 'i' before its TTL (ms) to add it or 'i' alone to remove it. Returns 1 when the value was
// there.
const DELETE_AND_WRITE = `${INDEX_FUNCTION}
local found = redis.call('DEL', KEYS[1])
local first, last = 2, tonumber(ARGV[1]) + 1
if found == 0 then first, last = last + 1, #KEYS end
for i = first, last do
  local at = 2 * (i - 2) + 2
  local ttl = ARGV[at + 1]
  if ttl == '' then redis.call('DEL', KEYS[i])
  elseif string.sub(ttl, 1, 1) == 'i' then index(KEYS[i], ARGV[at], string.sub(ttl, 2))
  else redis.call('SET', KEYS[i], ARGV[at], 'PX', ttl) end
end
return found
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
  };

  // The braces are a cluster hash tag: the keys of one code (redis-codes.ts) live in one slot.
  const k = (ns: Namespace, key: string) => `${ns}:{${key}}`;
  const attempts = redisAttemptSteps(redis, inOneWrite, k);
  // No fixed number of keys: the count goes first on each call.
  redis.defineCommand('idpDeleteAndWrite', { lua: DELETE_AND_WRITE });
  const parse = <T>(json: string | null): T | undefined => (json === null ? undefined : (JSON.parse(json) as T));

  const indexes = redisIndexes(redis, inOneWrite, k);
  /** Adds one write to a MULTI. */
  const queue = (batch: ChainableCommander, w: EphemeralWrite): ChainableCommander => {
    if (w.op === 'set') return batch.set(k(w.ns, w.key), JSON.stringify(w.value), 'PX', px(w.ttlSeconds));
    return w.op === 'delete' ? batch.del(k(w.ns, w.key)) : indexes.queue(batch, w);
  };
  /** Sends one write as one command. */
  const apply = async (w: EphemeralWrite): Promise<void> => {
    if (w.op === 'set') await inOneWrite().set(k(w.ns, w.key), JSON.stringify(w.value), 'PX', px(w.ttlSeconds));
    else if (w.op === 'delete') await inOneWrite().del(k(w.ns, w.key));
    else await indexes.apply(w);
  };
  const write = async (writes: readonly EphemeralWrite[]): Promise<void> => {
    // A cluster runs a MULTI within one hash slot only: there, each write goes on its own. One
    // write needs no MULTI.
    if (redis instanceof Cluster || writes.length <= 1) await Promise.all(writes.map(apply));
    else await writes.reduce(queue, inOneWrite().multi()).exec();
  };
  const keySteps: KeySteps = {
    async set(ns, key, value, ttlSeconds) {
      await apply({ op: 'set', ns, key, value, ttlSeconds });
    },
    async setIfAbsent(ns, key, value, ttlSeconds) {
      const ok = await inOneWrite().set(k(ns, key), JSON.stringify(value), 'PX', px(ttlSeconds), 'NX');
      return ok === 'OK';
    },
    async take<T>(ns: Namespace, key: string) {
      return parse<T>(await inOneWrite().getdel(k(ns, key)));
    },
    async increment(ns, key, ttlSeconds, by) {
      return Number(await scripts.increment([k(ns, key)], [String(Math.max(1, Math.ceil(ttlSeconds))), String(by)]));
    },
  };
  return {
    kind: 'redis',
    codes: createCodeStore(redisCodeSteps(redis, inOneWrite, k)),
    usedTotpCodes: createUsedTotpCodes(keySteps),
    idempotencyKeys: createIdempotencyKeys(keySteps),
    roundTrips: createRoundTrips(keySteps),
    passkeyChallenges: createPasskeyChallenges(keySteps),
    rates: createRateCounters(keySteps),
    attempts: createAttempts(attempts),
    channels: {
      async publish(channel, message) {
        await publisher(redis, inOneWrite).publish(`${keyPrefix}${channel}`, message);
      },
      subscribe(channel, listener) {
        return subscribeChannel(redis, `${keyPrefix}${channel}`, listener);
      },
    },
    set: keySteps.set,
    write,
    async get<T>(ns: Namespace, key: string) {
      return parse<T>(await inOneWrite().get(k(ns, key)));
    },
    async deleteAndWrite(ns, key, { deleted, missing }) {
      if (redis instanceof Cluster) {
        // The keys lie in different hash slots: deleted first, then written key by key.
        const found = (await redis.del(k(ns, key))) === 1;
        await write(found ? deleted : missing);
        return found;
      }
      const all = [...deleted, ...missing];
      const args = all.flatMap(deleteAndWriteArguments);
      const client = inOneWrite() as unknown as Record<string, (...params: Array<string | number>) => Promise<number>>;
      return (await client.idpDeleteAndWrite!(all.length + 1, k(ns, key), ...all.map((w) => k(w.ns, w.key)), String(deleted.length), ...args)) === 1;
    },
    async delete(ns, key) {
      await inOneWrite().del(k(ns, key));
    },
    indexed: indexes.indexed,
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
    async ping() {
      await inOneWrite().ping();
    },
    connected: () => redis.status === 'ready',
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** One write's two arguments to DELETE_AND_WRITE. */
function deleteAndWriteArguments(w: EphemeralWrite): [string, string] {
  if (w.op === 'set') return [JSON.stringify(w.value), String(px(w.ttlSeconds))];
  if (w.op === 'delete') return ['', ''];
  const [member, ttl] = indexArguments(w);
  return [member, `i${ttl}`];
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

/**
 * Where to publish. A cluster sends a PUBLISH to any node and forwards it to the others over its
 * bus, so two messages published through two nodes can reach a subscriber in either order. Every
 * instance publishes through the same node (the first master by address): one node's messages
 * reach each subscriber in the order it received them, as on a single Redis.
 */
function publisher(redis: Redis | Cluster, inOneWrite: () => Redis | Cluster): Redis | Cluster {
  if (!(redis instanceof Cluster)) return inOneWrite();
  const address = (node: Redis) => `${node.options.host ?? ''}:${node.options.port ?? 0}`;
  const [first] = redis.nodes('master').sort((a, b) => address(a).localeCompare(address(b)));
  return first ?? redis;
}
