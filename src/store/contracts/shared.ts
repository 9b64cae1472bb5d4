/** What several aggregates share: the change feed's events, keyset pages, versioned writes. */

/** What changed in the durable store, as announced to every instance. */
export type ChangeEvent =
  | { kind: 'client'; clientId: string }
  | { kind: 'clients' }
  | { kind: 'user'; userId: string }
  | { kind: 'users' }
  | { kind: 'keys' }
  /** A revocation was recorded (RevocationRepository), by any instance, command or SQL. */
  | { kind: 'revoked'; key: string; expiresAt: Date }
  /** Revocations may have been missed (the change feed reconnected): rebuild any copy of them. */
  | { kind: 'revocations' }
  | { kind: 'apiScopes' }
  /** A webhook endpoint was added, changed or removed. */
  | { kind: 'webhooks' }
  /** Deliveries were written (an event, a redelivery): an instance with room claims them now. */
  | { kind: 'webhookDue' };

/**
 * One page of a table in key order: the rows whose key comes after `after` (from the start
 * without it), at most `limit`. A keyset read (`WHERE key > $after ORDER BY key LIMIT n`), so a
 * deep page costs what the first does, and rows added or removed meanwhile move no other row.
 */
export interface PageRequest {
  after: string | undefined;
  limit: number;
}

/**
 * `ifVersion`: the write happens only while the row's version is still this one (false when it
 * is not, as when the row is gone: the caller tells the two apart by reading it again).
 */
export type IfVersion = number | undefined;

/** Result of an upsert, so that seeding can tell what it did. */
export type UpsertResult = 'created' | 'updated' | 'unchanged';
