/** Idempotency keys of the administration API. */

/**
 * Idempotency keys (`NAMESPACES.adminIdempotency`): the first request with a key claims it, so
 * of two sent at once only one runs; what it answered is then kept under the key (`set`).
 */
export interface IdempotencyKeyStore {
  /** Stores `value` under `key` unless something is there; true for exactly one caller. */
  claim(key: string, value: unknown, ttlSeconds: number): Promise<boolean>;
}
