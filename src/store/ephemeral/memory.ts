/**
 * The in-process ephemeral store of the embedded default: one instance only, since nothing
 * here is shared between processes. Values are kept as JSON text so that callers never share
 * mutable objects with the store, as with Redis.
 */
import type { Clock } from '../../clock.ts';
import type { CodeRecord, IssuedFromCode } from '../records.ts';
import type { AttemptRule, ChannelListener, EphemeralStore, EphemeralWrite, Namespace } from '../types.ts';
import { CODE_TTL_SECONDS, createCodeStore, type CodeSteps } from './codes.ts';
import { indexedMembers, indexMember, type MemoryIndex } from './memory-index.ts';
import { NAMESPACES } from './namespaces.ts';
import { createAttempts, createIdempotencyKeys, createPasskeyChallenges, createRateCounters, createRoundTrips, createUsedTotpCodes, type AttemptSteps, type KeySteps } from './purposes.ts';

interface Entry {
  json: string;
  expiresAt: number;
  /** A code's record: redeemed (the code store). */
  used: boolean;
}

/** The attempts at one thing (`AttemptStore.take`): as on Redis, the lock set by the count `lockedBy`. */
interface Attempts {
  count: number;
  expiresAt: number;
  lockedUntil: number;
  lockedBy: number;
}

const SWEEP_INTERVAL_MS = 30_000;

export function createMemoryEphemeralStore(clock: Clock = Date.now): EphemeralStore {
  const entries = new Map<string, Entry>();
  const counters = new Map<string, { count: number; expiresAt: number }>();
  const attempts = new Map<string, Attempts>();
  const indexes = new Map<string, MemoryIndex>();
  const channels = new Map<string, Set<ChannelListener>>();
  const sweeper = setInterval(() => sweepExpired([entries, counters, attempts, indexes], clock()), SWEEP_INTERVAL_MS);
  sweeper.unref();

  const live = (k: string): Entry | undefined => liveIn(entries, k, clock());
  const put = (k: string, value: unknown, ttlSeconds: number) => {
    entries.set(k, { json: JSON.stringify(value), expiresAt: clock() + ttlSeconds * 1000, used: false });
  };
  const read = <T>(k: string): T | undefined => {
    const entry = live(k);
    return entry ? (JSON.parse(entry.json) as T) : undefined;
  };
  // A value and a counter may share a key (increment, then delete): both go.
  const remove = (k: string) => {
    entries.delete(k);
    counters.delete(k);
    attempts.delete(k);
    indexes.delete(k);
  };
  const applyWrites = (writes: readonly EphemeralWrite[]) => {
    for (const w of writes) {
      const k = `${w.ns}:${w.key}`;
      if (w.op === 'set') put(k, w.value, w.ttlSeconds);
      else if (w.op === 'delete') remove(k);
      else indexMember(indexes, k, w.member, w.op === 'index' ? clock() + w.ttlSeconds * 1000 : undefined, clock());
    }
  };
  const liveAttempts = (k: string): Attempts | undefined => liveIn(attempts, k, clock());

  const isLocked = (k: string): boolean => (liveAttempts(k)?.lockedUntil ?? 0) > clock();
  const countAttempt = (k: string, rule: AttemptRule): void => {
    const now = clock();
    const current = liveAttempts(k) ?? { count: 0, expiresAt: now + rule.windowSeconds * 1000, lockedUntil: 0, lockedBy: 0 };
    current.count += 1;
    if (current.count >= rule.limit) {
      const lockMs = Math.min(rule.lockSeconds * 2 ** (current.count - rule.limit), rule.maxLockSeconds) * 1000;
      current.lockedUntil = now + lockMs;
      current.lockedBy = current.count;
      current.expiresAt = Math.max(current.expiresAt, current.lockedUntil);
    }
    attempts.set(k, current);
  };
  const giveBack = (k: string): void => {
    const found = liveAttempts(k);
    if (!found) return;
    found.count = Math.max(0, found.count - 1);
    if (found.lockedBy > found.count) {
      found.lockedUntil = 0;
      found.lockedBy = 0;
    }
  };

  // Each step runs to its end before any other call: atomic as a Redis script.
  const codeSteps: CodeSteps = {
    async redeem(key) {
      const entry = live(`${NAMESPACES.code}:${key}`);
      if (!entry) return { outcome: 'unknown' };
      if (!entry.used) {
        entry.used = true;
        return { outcome: 'redeemed', record: JSON.parse(entry.json) as CodeRecord };
      }
      const issued = read<IssuedFromCode>(`${NAMESPACES.codeIssued}:${key}`);
      if (!issued) put(`${NAMESPACES.codeReplayed}:${key}`, 1, CODE_TTL_SECONDS);
      return { outcome: 'replayed', issued };
    },
    async recordIssued(key, issued) {
      put(`${NAMESPACES.codeIssued}:${key}`, issued, CODE_TTL_SECONDS);
      return live(`${NAMESPACES.codeReplayed}:${key}`) !== undefined;
    },
  };

  const attemptSteps: AttemptSteps = {
    async takeAttemptsOrLocked(ns, wanted) {
      // Every lock is looked at before anything is counted: all or nothing, as on Redis.
      const locked = wanted.find(({ key }) => isLocked(`${ns}:${key}`));
      if (locked) return locked.key;
      for (const { key, rule } of wanted) countAttempt(`${ns}:${key}`, rule);
      return undefined;
    },
    async giveBackAttempts(ns, keys) {
      for (const key of keys) giveBack(`${ns}:${key}`);
    },
  };

  const keySteps: KeySteps = {
    async set(ns, key, value, ttlSeconds) {
      put(`${ns}:${key}`, value, ttlSeconds);
    },
    async setIfAbsent(ns, key, value, ttlSeconds) {
      if (live(`${ns}:${key}`)) return false;
      put(`${ns}:${key}`, value, ttlSeconds);
      return true;
    },
    async take<T>(ns: Namespace, key: string) {
      const entry = live(`${ns}:${key}`);
      if (!entry) return undefined;
      entries.delete(`${ns}:${key}`);
      return JSON.parse(entry.json) as T;
    },
    async increment(ns, key, ttlSeconds, by) {
      const k = `${ns}:${key}`;
      const now = clock();
      const counter = counters.get(k);
      if (!counter || counter.expiresAt <= now) {
        counters.set(k, { count: by, expiresAt: now + ttlSeconds * 1000 });
        return by;
      }
      counter.count += by;
      return counter.count;
    },
  };

  return {
    kind: 'memory',
    codes: createCodeStore(codeSteps),
    usedTotpCodes: createUsedTotpCodes(keySteps),
    idempotencyKeys: createIdempotencyKeys(keySteps),
    roundTrips: createRoundTrips(keySteps),
    passkeyChallenges: createPasskeyChallenges(keySteps),
    rates: createRateCounters(keySteps),
    attempts: createAttempts(attemptSteps),
    channels: {
      async publish(channel, message) {
        // Delivered after the publisher's own step, as a network round trip would.
        for (const listener of channels.get(channel) ?? []) queueMicrotask(() => listener.message(message));
      },
      subscribe(channel, listener) {
        const listeners = channels.get(channel) ?? new Set();
        channels.set(channel, listeners.add(listener));
        queueMicrotask(() => listeners.has(listener) && listener.listening(true));
        return () => {
          listeners.delete(listener);
        };
      },
    },
    set: keySteps.set,
    async write(writes) {
      applyWrites(writes);
    },
    async get<T>(ns: Namespace, key: string) {
      return read<T>(`${ns}:${key}`);
    },
    async deleteAndWrite(ns, key, { deleted, missing }) {
      const found = live(`${ns}:${key}`) !== undefined;
      entries.delete(`${ns}:${key}`);
      applyWrites(found ? deleted : missing);
      return found;
    },
    async delete(ns, key) {
      remove(`${ns}:${key}`);
    },
    async indexed(ns, key) {
      return indexedMembers(indexes, `${ns}:${key}`, clock());
    },
    async entries<T>(ns: Namespace) {
      const prefix = `${ns}:`;
      const found: Array<[string, T]> = [];
      for (const k of entries.keys()) {
        const entry = k.startsWith(prefix) ? live(k) : undefined;
        if (entry) found.push([k.slice(prefix.length), JSON.parse(entry.json) as T]);
      }
      return found;
    },
    async ping() {},
    async close() {
      clearInterval(sweeper);
      entries.clear();
      counters.clear();
      attempts.clear();
      indexes.clear();
      channels.clear();
    },
  };
}

/** What is stored under `k`, unless it has expired (then it is dropped on the way). */
function liveIn<V extends { expiresAt: number }>(map: Map<string, V>, k: string, now: number): V | undefined {
  const found = map.get(k);
  if (found && found.expiresAt <= now) {
    map.delete(k);
    return undefined;
  }
  return found;
}

function sweepExpired(maps: ReadonlyArray<Map<string, { expiresAt: number }>>, now: number): void {
  for (const map of maps) for (const [k, v] of map) if (v.expiresAt <= now) map.delete(k);
}
