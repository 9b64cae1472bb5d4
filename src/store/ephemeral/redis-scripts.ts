/** Lua scripts on a Redis connection: each one atomic, in one round trip. */
import type { Cluster, Redis } from 'ioredis';

/** Runs a script defined on a connection: `keys`, then `args`. */
export type RedisScript = (keys: readonly string[], args: readonly string[]) => Promise<unknown>;

/**
 * Defines a Lua script on the connection and returns how to run it. ioredis sends it in full
 * (EVAL) the first time on each socket and by its SHA-1 (EVALSHA) after that, so that the
 * commands sent in one tick keep their order (only after a SCRIPT FLUSH does the one call that
 * meets NOSCRIPT go again, behind the others); `connection()` is what to send it on each time.
 */
export function defineScript(redis: Redis | Cluster, connection: () => Redis | Cluster, name: string, numberOfKeys: number, lua: string): RedisScript {
  redis.defineCommand(name, { numberOfKeys, lua });
  return (keys, args) => {
    if (keys.length !== numberOfKeys) throw new Error(`${name} takes ${numberOfKeys} keys`);
    const client = connection() as unknown as Record<string, (...params: string[]) => Promise<unknown>>;
    return client[name]!(...keys, ...args);
  };
}

/** A TTL in whole milliseconds, at least one (Redis refuses PX 0). */
export const px = (ttlSeconds: number): number => Math.max(1, Math.round(ttlSeconds * 1000));
