/**
 * Attempts at something limited (AttemptStore.take) on Redis: one script over every
 * key asked about, so that the sign-in throttle's account and address are taken, or given back,
 * in one round trip and atomically. On Redis Cluster the keys of one call lie in different hash
 * slots, which a script may not touch together: there each key goes on its own, and what was
 * taken is given back when another key refused.
 */
import { Cluster, type Redis } from 'ioredis';
import type { AttemptRule, Namespace } from '../types.ts';

// The attempts at one thing, one hash per key: n = attempts counted, until = locked until (ms
// of Redis's own clock, so that instances with skewed clocks agree), by = the count that set the
// lock. ARGV: four per key, in order: limit, window, first lock and longest lock (ms). Every lock
// is looked at before anything is counted: returns -i with nothing counted when the i-th key
// (from 1) is the first locked one, 1 when each key took its attempt.
// (replicate_commands: before Redis 5, a script that reads TIME may write only when replicated by
// its effects; from 7.0 on it is always so, and the call does nothing.)
const TAKE_ATTEMPTS = `
redis.replicate_commands()
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('HGET', key, 'until') or '0') > now then return -i end
end
for i, key in ipairs(KEYS) do
  local at = (i - 1) * 4
  local limit, lock, maxLock = tonumber(ARGV[at + 1]), tonumber(ARGV[at + 3]), tonumber(ARGV[at + 4])
  local n = redis.call('HINCRBY', key, 'n', 1)
  if n == 1 then redis.call('PEXPIRE', key, ARGV[at + 2]) end
  if n >= limit then
    local ms = math.floor(math.min(lock * 2 ^ (n - limit), maxLock))
    redis.call('HSET', key, 'until', string.format('%.0f', now + ms), 'by', n)
    if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, string.format('%.0f', ms)) end
  end
end
return 1
`;

// Uncounts one attempt on each key; a lock set by a count that included it goes with it.
const GIVE_BACK_ATTEMPTS = `
for _, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 1 then
    local n = redis.call('HINCRBY', key, 'n', -1)
    if n < 0 then
      redis.call('HSET', key, 'n', 0)
      n = 0
    end
    if tonumber(redis.call('HGET', key, 'by') or '0') > n then redis.call('HDEL', key, 'until', 'by') end
  end
end
return 1
`;

type Attempt = { key: string; rule: AttemptRule };

export interface RedisAttemptSteps {
  takeAttemptsOrLocked(ns: Namespace, attempts: readonly Attempt[]): Promise<string | undefined>;
  giveBackAttempts(ns: Namespace, keys: readonly string[]): Promise<void>;
}

/**
 * `redis` is the connection, `connection()` what to send on (its writes coalesced); `k` names
 * a key as the store does.
 */
export function redisAttemptSteps(redis: Redis | Cluster, connection: () => Redis | Cluster, k: (ns: Namespace, key: string) => string): RedisAttemptSteps {
  // No fixed number of keys: the count goes first on each call (EVALSHA sha numkeys ...).
  redis.defineCommand('idpTakeAttempts', { lua: TAKE_ATTEMPTS });
  redis.defineCommand('idpGiveBackAttempts', { lua: GIVE_BACK_ATTEMPTS });
  const run = (name: string, keys: readonly string[], args: readonly string[]): Promise<unknown> => {
    const client = connection() as unknown as Record<string, (...params: Array<string | number>) => Promise<unknown>>;
    return client[name]!(keys.length, ...keys, ...args);
  };
  const ms = (seconds: number) => String(Math.max(1, Math.round(seconds * 1000)));
  const ruleArgs = ({ rule }: Attempt) => [String(rule.limit), ms(rule.windowSeconds), ms(rule.lockSeconds), ms(rule.maxLockSeconds)];
  const take = async (ns: Namespace, attempts: readonly Attempt[]): Promise<string | undefined> => {
    const answer = Number(await run('idpTakeAttempts', attempts.map(({ key }) => k(ns, key)), attempts.flatMap(ruleArgs)));
    return answer === 1 ? undefined : attempts[-answer - 1]?.key;
  };
  const giveBack = async (ns: Namespace, keys: readonly string[]) => {
    if (keys.length > 0) await run('idpGiveBackAttempts', keys.map((key) => k(ns, key)), []);
  };

  if (!(redis instanceof Cluster)) return { takeAttemptsOrLocked: take, giveBackAttempts: giveBack };
  return {
    async takeAttemptsOrLocked(ns, attempts) {
      // Asked together; a key that let the attempt in while another refused gets it back, so
      // that a locked key does not use up the others' attempts.
      const locked = await Promise.all(attempts.map((attempt) => take(ns, [attempt])));
      const refused = locked.find((key) => key !== undefined);
      if (refused === undefined) return undefined;
      await Promise.all(attempts.filter((_, i) => locked[i] === undefined).map(({ key }) => giveBack(ns, [key])));
      return refused;
    },
    giveBackAttempts: (ns, keys) => Promise.all(keys.map((key) => giveBack(ns, [key]))).then(() => undefined),
  };
}
