/** Webhooks: the outbox of events, the endpoints and their deliveries. */
import type { WebhookEndpointRecord, WebhookEndpointInput, WebhookEndpointChange, OutboxEvent, ClaimedAttempt, DeliveryAttemptRecord, WebhookDisabledReason, FinishedAttempt } from '../records.ts';

/**
 * The outbox: events that an enabled endpoint subscribes to, each with one delivery per such
 * endpoint. On a transaction's store, the event is written with the transaction's change.
 */
export interface OutboxRepository {
  /**
   * Writes the event and its deliveries (one per enabled endpoint subscribed to its type, or
   * to only `endpointId` when given, enabled or not); nothing when none is. Returns how many.
   */
  append(event: OutboxEvent, endpointId?: string): Promise<number>;
  /**
   * Writes several events at once, each as `append` without an endpoint would. With `claim`, the
   * caller takes the first attempts of their deliveries within those limits as they are written
   * (their leases start, their attempts are recorded as started, and no other instance is woken
   * for them): they come back in `claimed`. The rest are due, and announced, as `append`'s are.
   */
  appendMany(events: readonly OutboxEvent[], claim?: ClaimLimits): Promise<AppendedEvents>;
}

/** What `appendMany` wrote: how many deliveries, and those the caller claimed at once. */
export interface AppendedEvents {
  deliveries: number;
  claimed: ClaimedAttempt[];
}

/** What claiming due attempts may take (DurableStore.webhooks.claim). */
export interface ClaimLimits {
  /** Attempts claimed at most. */
  total: number;
  /** Attempts in flight per endpoint at most, counting `busy`. */
  perEndpoint: number;
  /** Attempts this instance has in flight, by endpoint. */
  busy: ReadonlyMap<string, number>;
  /** How long a claimed attempt is this instance's: after it, the delivery is due again. */
  leaseSeconds: number;
}

/** Webhook endpoints and their deliveries. Times are the database's. */
export interface WebhookRepository {
  create(endpoint: WebhookEndpointInput): Promise<WebhookEndpointRecord>;
  get(id: string): Promise<WebhookEndpointRecord | undefined>;
  list(): Promise<WebhookEndpointRecord[]>;
  /**
   * Enabling an endpoint forgets why it was disabled and since when it failed. With `ifVersion`,
   * only the row at that version is written (undefined / false otherwise).
   */
  update(id: string, change: WebhookEndpointChange, ifVersion?: number): Promise<WebhookEndpointRecord | undefined>;
  remove(id: string, ifVersion?: number): Promise<boolean>;
  /** The event types enabled endpoints subscribe to (`*` among them when one takes every type). */
  subscribedTypes(): Promise<string[]>;
  /**
   * Claims due attempts of enabled endpoints: each delivery is taken by one caller (FOR UPDATE
   * SKIP LOCKED), its attempt count raised and the attempt recorded as started, in one statement.
   */
  claim(limits: ClaimLimits): Promise<ClaimedAttempt[]>;
  /**
   * Records how attempts ended and what follows for their deliveries and endpoints, in one
   * statement (an endpoint's failing or healthy state follows the last of its attempts given).
   */
  finish(attempts: readonly FinishedAttempt[]): Promise<void>;
  /**
   * Disables the endpoint if it is enabled and, for `failing`, has failed since before
   * `failingFor` seconds ago; true when this call disabled it.
   */
  disable(endpointId: string, reason: WebhookDisabledReason, failingForSeconds: number): Promise<boolean>;
  /** Seconds until the next pending attempt of an enabled endpoint is due (0 if one is); undefined when none. */
  nextDueIn(): Promise<number | undefined>;
  /**
   * The attempts of an endpoint's deliveries, newest first: `limit` of them, after the one whose
   * `key` is `after` (a key this method gave; the newest when absent).
   */
  attempts(endpointId: string, limit: number, after?: string): Promise<DeliveryAttemptRecord[]>;
  /** How many attempts the endpoint's deliveries made (every page of `attempts` together). */
  countAttempts(endpointId: string): Promise<number>;
  /** Makes a delivery of the endpoint due now, from the start of the schedule; false when unknown. */
  redeliver(endpointId: string, deliveryId: string): Promise<boolean>;
  /** Pending deliveries of enabled endpoints, and the age in seconds of the oldest one's event. */
  backlog(): Promise<{ pending: number; oldestAgeSeconds: number }>;
}
