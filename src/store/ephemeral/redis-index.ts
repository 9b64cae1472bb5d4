/**
 * Indexes on Redis (`EphemeralWrite` `index`/`unindex`, `EphemeralStore.indexed`): one sorted
 * set per index key, each member scored by its expiry (ms, Redis's own clock, so instances
 * whose clocks differ agree). Every step is a script on that one key, so it holds on a cluster;
 * the key's TTL follows its latest member, and expired members are trimmed at each step.
 */
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import type { EphemeralWrite, Namespace } from '../types.ts';
import { defineScript, px } from './redis-scripts.ts';

/**
 * `index(key, member, ttl)`: trims, then adds `member` for `ttl` ms (or removes it when `ttl`
 * is ''; nothing when `member` is nil), then sets the key's expiry to its latest member's.
 */
export const INDEX_FUNCTION = `
local function index(key, member, ttl)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if member ~= nil then
    if ttl == '' then redis.call('ZREM', key, member) else redis.call('ZADD', key, now + tonumber(ttl), member) end
  end
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if #last == 0 then redis.call('DEL', key) else redis.call('PEXPIREAT', key, string.format('%d', tonumber(last[2]))) end
end
`;

const INDEX_WRITE = `${INDEX_FUNCTION}
index(KEYS[1], ARGV[1], ARGV[2])
return 1
`;

const INDEX_READ = `${INDEX_FUNCTION}
index(KEYS[1], nil, nil)
return redis.call('ZRANGE', KEYS[1], 0, -1)
`;

type IndexWrite = Extract<EphemeralWrite, { op: 'index' | 'unindex' }>;

/** An index write's arguments: the member, and its TTL in ms ('' to remove it). */
export const indexArguments = (w: IndexWrite): [string, string] => [w.member, w.op === 'index' ? String(px(w.ttlSeconds)) : ''];

export function redisIndexes(redis: Redis | Cluster, inOneWrite: () => Redis | Cluster, k: (ns: Namespace, key: string) => string) {
  const write = defineScript(redis, inOneWrite, 'idpIndexWrite', 1, INDEX_WRITE);
  const read = defineScript(redis, inOneWrite, 'idpIndexRead', 1, INDEX_READ);
  return {
    apply: async (w: IndexWrite): Promise<void> => {
      await write([k(w.ns, w.key)], indexArguments(w));
    },
    /** Adds the write to a MULTI (a script defined on the connection runs in one as well). */
    queue: (batch: ChainableCommander, w: IndexWrite): ChainableCommander =>
      (batch as unknown as Record<string, (...args: string[]) => ChainableCommander>).idpIndexWrite!(k(w.ns, w.key), ...indexArguments(w)),
    indexed: async (ns: Namespace, key: string): Promise<string[]> => (await read([k(ns, key)], [])) as string[],
  };
}
