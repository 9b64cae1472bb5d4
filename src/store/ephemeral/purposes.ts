/**
 * Stores of the ephemeral data that serve one purpose each, on either backend: the TOTP codes
 * already accepted, the round trips to an upstream provider, the rate limits' counts, the
 * sign-in attempts. Each backend supplies the
 * atomic steps (`KeySteps`); the key names are those releases before these stores used, so that
 * instances of both share them while they roll.
 */
import type { AttemptStore, IdempotencyKeyStore, Namespace, PasskeyChallengeStore, RateCounterStore, RoundTripLeg, RoundTripStore, UsedTotpCodeStore } from '../types.ts';
import { NAMESPACES } from './namespaces.ts';

/** What a backend does in one atomic step each. */
export interface KeySteps {
  set(ns: Namespace, key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /** Sets only when absent; true when this call set it. */
  setIfAbsent(ns: Namespace, key: string, value: unknown, ttlSeconds: number): Promise<boolean>;
  /** Reads and deletes: exactly one caller gets the value. */
  take<T>(ns: Namespace, key: string): Promise<T | undefined>;
  /** Adds `by` and returns the new count; the TTL starts with the first increment. */
  increment(ns: Namespace, key: string, ttlSeconds: number, by: number): Promise<number>;
}

/** The attempts' two steps, per namespace (redis-attempts.ts, memory.ts). */
export interface AttemptSteps {
  /** The first locked key, nothing counted; undefined when every key took its attempt. */
  takeAttemptsOrLocked(ns: Namespace, attempts: Parameters<AttemptStore['take']>[0]): Promise<string | undefined>;
  giveBackAttempts(ns: Namespace, keys: readonly string[]): Promise<void>;
}

export function createAttempts(steps: AttemptSteps): AttemptStore {
  return {
    take: (attempts) => steps.takeAttemptsOrLocked(NAMESPACES.signInAttempts, attempts),
    giveBack: (keys) => steps.giveBackAttempts(NAMESPACES.signInAttempts, keys),
  };
}

export function createRateCounters(steps: Pick<KeySteps, 'increment'>): RateCounterStore {
  return {
    add: (subject, window, ttlSeconds, by = 1) => steps.increment(NAMESPACES.rate, `${subject}:${window}`, ttlSeconds, by),
  };
}

export function createUsedTotpCodes(steps: Pick<KeySteps, 'setIfAbsent'>): UsedTotpCodeStore {
  return {
    claim: (userId, timeStep, ttlSeconds) => steps.setIfAbsent(NAMESPACES.totpUsed, `${userId}:${timeStep}`, 1, ttlSeconds),
  };
}

export function createIdempotencyKeys(steps: Pick<KeySteps, 'setIfAbsent'>): IdempotencyKeyStore {
  return {
    claim: (key, value, ttlSeconds) => steps.setIfAbsent(NAMESPACES.adminIdempotency, key, value, ttlSeconds),
  };
}

const LEG_NAMESPACES: Record<RoundTripLeg, Namespace> = { 'sign-in': NAMESPACES.upstreamSignIn, 'sign-out': NAMESPACES.upstreamSignOut };

export function createRoundTrips(steps: Pick<KeySteps, 'set' | 'take'>): RoundTripStore {
  return {
    start: (leg, key, trip, ttlSeconds) => steps.set(LEG_NAMESPACES[leg], key, trip, ttlSeconds),
    finish: (leg, key) => steps.take(LEG_NAMESPACES[leg], key),
  };
}

export function createPasskeyChallenges(steps: Pick<KeySteps, 'set' | 'take'>): PasskeyChallengeStore {
  return {
    issue: (key, challenge, ttlSeconds) => steps.set(NAMESPACES.passkeyChallenge, key, challenge, ttlSeconds),
    take: (key) => steps.take(NAMESPACES.passkeyChallenge, key),
  };
}
