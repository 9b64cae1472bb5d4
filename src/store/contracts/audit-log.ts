/**
 * The audit log: the `events` table read newest first. An event is there when it is audited (its
 * type not excluded, a retention above 0) or a webhook endpoint subscribed to it; the outbox
 * (OutboxRepository) writes it, in the transaction of the change it records where there is one.
 */

/** Where a page of the log ends: the next page starts after it (newest first). */
export interface AuditLogCursor {
  /** The event's time in microseconds since the epoch, exact as stored. */
  micros: string;
  id: string;
}

/** Which events, and how many: every filter given must match. */
export interface AuditLogFilter {
  /** Any of these types (none given: every type). */
  types?: readonly string[] | undefined;
  /** The user an event is about: its `user_id`, or the `sub` of a user an administrative change names. */
  userId?: string | undefined;
  /** The event's `client_id` (for a change by the administration API, the calling client). */
  clientId?: string | undefined;
  /** At or after. */
  since?: Date | undefined;
  /** Before. */
  until?: Date | undefined;
}

export interface AuditLogQuery extends AuditLogFilter {
  limit: number;
  cursor?: AuditLogCursor | undefined;
}

export interface AuditLogEntry {
  /** The webhook id of the same event (`evt_…`). */
  id: string;
  type: string;
  occurredAt: Date;
  data: Record<string, unknown>;
  /** The user the event is about and its client, as the filters see them (null when it names none). */
  userId: string | null;
  clientId: string | null;
  /** Where a page that ends with this event continues. */
  cursor: AuditLogCursor;
}

/** What the purge deletes in one call: events before `before`, of `types` only when given. */
export interface AuditLogPurge {
  before: Date;
  types?: readonly string[] | undefined;
}

export interface AuditLogRepository {
  /** `limit` events matching the query, newest first (occurred_at, then id, descending), after `cursor`. */
  list(query: AuditLogQuery): Promise<AuditLogEntry[]>;
  /** How many events match (every page together). */
  count(filter: AuditLogFilter): Promise<number>;
  /**
   * Deletes up to `limit` events of the purge (with their deliveries and attempts), skipping rows
   * another transaction holds; returns how many. Small batches: no lock is held for long.
   */
  purge(purge: AuditLogPurge, limit: number): Promise<number>;
}
