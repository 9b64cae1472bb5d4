/** Counted attempts: the sign-in throttle and the rate limits. */

/** What `AttemptStore.take` allows on a key. */
export interface AttemptRule {
  /** Attempts counted before the key locks (the one reaching it locks, judged or not). */
  limit: number;
  /** The count lives this long from its first attempt, or until its lock ends if that is later. */
  windowSeconds: number;
  /** The attempt that brings the count to `limit` + k locks for lockSeconds * 2^k ... */
  lockSeconds: number;
  /** ... at most this long. */
  maxLockSeconds: number;
}

/** Attempts at something limited, per key, across instances (`NAMESPACES.signInAttempts`). */
export interface AttemptStore {
  /**
   * Takes one attempt at something limited on each key, before it is judged, in one atomic step
   * across instances, and says which key refused: the first locked key in the order given (and
   * nothing counted on any key) while one of them is locked; undefined when each attempt was
   * counted. The attempt that brings a key's count to its limit or past it locks that key at
   * once, so that concurrent attempts are refused instead of judged. An attempt judged a failure
   * is simply kept; one that does not count is given back (`giveBack`). One round trip outside a
   * cluster (a script over every key); a cluster takes key by key and gives back what was taken
   * when one refused.
   */
  take(attempts: ReadonlyArray<{ key: string; rule: AttemptRule }>): Promise<string | undefined>;
  /**
   * Uncounts an attempt taken with `take` on each key, and lifts a key's lock when it was
   * set by a count that included it. Nothing happens to a count that expired meanwhile. One round
   * trip outside a cluster.
   */
  giveBack(keys: readonly string[]): Promise<void>;
}

/** Requests counted per subject and window (the token and authorize rate limits), across instances. */
export interface RateCounterStore {
  /**
   * Adds `by` (default 1) to the subject's count in `window` and returns the new count; the
   * count lives `ttlSeconds` from its first addition.
   */
  add(subject: string, window: number, ttlSeconds: number, by?: number): Promise<number>;
}
