/** Short-lived values with a time to live (Redis or an in-process map), and its stores of one purpose each. */
import type { Namespace } from '../ephemeral/namespaces.ts';
import type { AttemptStore, RateCounterStore } from './attempts.ts';
import type { ChannelStore } from './channels.ts';
import type { CodeStore } from './codes.ts';
import type { EphemeralWrite, EphemeralWritesByOutcome } from './ephemeral-writes.ts';
import type { IdempotencyKeyStore } from './idempotency-keys.ts';
import type { PasskeyChallengeStore, RoundTripStore, UsedTotpCodeStore } from './interactions.ts';

/**
 * Short-lived values with a time to live. Values are JSON. Every operation is atomic across
 * instances sharing one store. Namespaces (`NAMESPACES`) keep kinds of values apart.
 */
export interface EphemeralStore {
  readonly kind: 'redis' | 'memory';
  /** Authorization codes on this store. */
  readonly codes: CodeStore;
  /** TOTP codes accepted already. */
  readonly usedTotpCodes: UsedTotpCodeStore;
  /** Idempotency keys of the administration API, claimed by the first request that brings one. */
  readonly idempotencyKeys: IdempotencyKeyStore;
  /** Round trips to an upstream provider. */
  readonly roundTrips: RoundTripStore;
  /** WebAuthn challenges on their way to the authenticator and back. */
  readonly passkeyChallenges: PasskeyChallengeStore;
  /** Requests counted for the rate limits. */
  readonly rates: RateCounterStore;
  /** Messages to every instance. */
  readonly channels: ChannelStore;
  /** Sign-in attempts, counted and locked per account and per address (the throttle). */
  readonly attempts: AttemptStore;
  set(ns: Namespace, key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /**
   * Several sets and deletes, in order, in one round trip where the store can (one Redis
   * MULTI; a cluster sends them key by key). Each write is atomic; the batch is not.
   */
  write(writes: readonly EphemeralWrite[]): Promise<void>;
  get<T>(ns: Namespace, key: string): Promise<T | undefined>;
  /**
   * Deletes a value and, with it, makes the writes of the outcome: `deleted` when the value was
   * there, `missing` when not; true when this call deleted it. Exactly one of concurrent callers
   * deletes it, and only its `deleted` writes are made. One atomic step (one
   * script) outside a cluster; a cluster deletes, then writes key by key (so there the writes
   * are not in order with other calls of the same tick).
   */
  deleteAndWrite(ns: Namespace, key: string, writes: EphemeralWritesByOutcome): Promise<boolean>;
  delete(ns: Namespace, key: string): Promise<void>;
  /**
   * The live members of the index `key` (see `EphemeralWrite`), oldest expiry first; expired
   * members are dropped on the way. One key, one atomic step (cluster-safe).
   */
  indexed(ns: Namespace, key: string): Promise<string[]>;
  /** Every live value of a namespace, by key: a full scan, for rebuilding a local copy. */
  entries<T>(ns: Namespace): Promise<Array<[string, T]>>;
  ping(): Promise<void>;
  /** Redis only, for the metrics: whether the connection is up now (no round trip). */
  connected?(): boolean;
  close(): Promise<void>;
}
