/** Lasting revocations. */
import type { RevocationRecord } from '../records.ts';

/**
 * The durable record of revocations: what every instance rebuilds its in-memory copy from, so
 * that a revocation outlives the loss of Redis. Each new record is announced to every instance
 * (`onChange`: `revoked`).
 */
export interface RevocationRepository {
  /** Records revocations (those expired at `now` are skipped; one recorded already stays as it is). */
  add(records: readonly RevocationRecord[], now: Date): Promise<void>;
  isRevoked(key: string, now: Date): Promise<boolean>;
  /** Revocations still in force at `now`, at most `limit` of them. */
  live(now: Date, limit: number): Promise<RevocationRecord[]>;
  /**
   * Revokes every refresh token family of a user and every access token issued to them, in one
   * statement, and returns what it recorded. The store does the same by itself when a user is
   * locked, removed, or flagged to change their password or enrol a second factor.
   */
  revokeUser(userId: string, reason: string, now: Date): Promise<RevocationRecord[]>;
  /** Deletes up to `limit` revocations whose tokens have expired at `now`; returns how many. */
  purgeExpired(now: Date, limit: number): Promise<number>;
}
