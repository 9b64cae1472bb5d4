/**
 * The outbox sink: an audit event that an enabled webhook endpoint subscribes to is written to
 * the outbox (right after the change it records; one recorded `inOutbox` was written in the
 * change's own transaction and is skipped). Which types are subscribed is known in memory
 * (subscriptions.ts), so that an event nobody subscribes to costs no database round trip:
 * the token endpoint records one at every request.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { ClaimedAttempt, ClaimLimits, OutboxEvent, OutboxRepository } from '../store/types.ts';
import type { AuditEvent } from './audit-events.ts';
import { withContext, type AuditSink, type EventContext } from './record.ts';

/** `evt_` and 128 random bits: the `webhook-id` of every delivery of the event. */
export function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

/** The outbox form of an audit event: its context and its fields (names and ids only) are the `data`. */
export function outboxEventOf(event: AuditEvent, clock: Clock, context?: EventContext): OutboxEvent {
  const { type, ...fields } = event;
  return { id: newEventId(), type, occurredAt: new Date(clock()), data: withContext(fields, context) };
}

/** Events written together at most, and how long the first of a batch waits for others. */
const BATCH_SIZE = 200;
const BATCH_DELAY_MS = 20;

/** A delivery that takes the deliveries of events as they are written (dispatcher.ts). */
export interface ClaimingDelivery {
  /**
   * The room it has now for attempts claimed as their events are written; undefined when it has
   * none, or is claiming meanwhile. Until `adopt`, it claims nothing else.
   */
  reserve(): ClaimLimits | undefined;
  /** Makes the attempts claimed with the room of `reserve` (none if the write failed), and ends the reservation. */
  adopt(claimed: readonly ClaimedAttempt[]): void;
}

export interface OutboxSinkDeps {
  /** The outbox (opened on first use by the command line). */
  outbox: () => Promise<Pick<OutboxRepository, 'appendMany'>>;
  /** Whether an enabled endpoint may subscribe to the type; absent: ask the database each time. */
  subscribed?: (type: string) => boolean;
  /** This instance's delivery, while it delivers: it takes the deliveries of what is written here at once. */
  delivery?: () => ClaimingDelivery | undefined;
  clock: Clock;
  onError: (error: unknown) => void;
}

export interface OutboxSink extends AuditSink {
  /** Resolves once every write started so far has ended (the command line waits before it exits). */
  flush(): Promise<void>;
}

/**
 * Events are written in batches: those recorded within a few milliseconds of each other go in
 * one statement, so that a busy token endpoint adds one commit per batch rather than per
 * request; and their first attempts are claimed by this instance's delivery in that statement,
 * within its room (no notification, no claim of their own).
 */
export function createOutboxSink(deps: OutboxSinkDeps): OutboxSink {
  const writes = new Set<Promise<void>>();
  let batch: OutboxEvent[] = [];
  let timer: NodeJS.Timeout | undefined;
  const send = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const events = batch;
    batch = [];
    if (events.length === 0) return;
    const delivery = deps.delivery?.();
    const room = delivery?.reserve();
    let claimed: ClaimedAttempt[] = [];
    const write = deps.outbox()
      .then((outbox) => outbox.appendMany(events, room))
      .then((written) => void (claimed = written.claimed), deps.onError)
      .finally(() => {
        if (room) delivery?.adopt(claimed);
        writes.delete(write);
      });
    writes.add(write);
  };
  return {
    record(event, origin, options) {
      if (options?.inOutbox || (deps.subscribed && !deps.subscribed(event.type))) return;
      batch.push(outboxEventOf(event, deps.clock, origin.context));
      if (batch.length >= BATCH_SIZE) send();
      else timer ??= setTimeout(send, BATCH_DELAY_MS);
    },
    async flush() {
      send();
      await Promise.all([...writes]);
    },
  };
}
