/**
 * The outbox sink: an audit event that an enabled webhook endpoint subscribes to is written to
 * the outbox (right after the change it records; one recorded `inOutbox` was written in the
 * change's own transaction and is skipped). Which types are subscribed is known in memory
 * (subscriptions.ts), so that an event nobody subscribes to costs no database round trip:
 * the token endpoint records one at every request.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { OutboxEvent, OutboxRepository } from '../store/types.ts';
import type { AuditEvent } from './audit-events.ts';
import type { AuditSink } from './record.ts';

/** `evt_` and 128 random bits: the `webhook-id` of every delivery of the event. */
export function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

/** The outbox form of an audit event: its fields (names and ids only) are the `data`. */
export function outboxEventOf(event: AuditEvent, clock: Clock): OutboxEvent {
  const { type, ...data } = event;
  return { id: newEventId(), type, occurredAt: new Date(clock()), data };
}

export interface OutboxSinkDeps {
  /** The outbox (opened on first use by the command line). */
  outbox: () => Promise<Pick<OutboxRepository, 'append'>>;
  /** Whether an enabled endpoint may subscribe to the type; absent: ask the database each time. */
  subscribed?: (type: string) => boolean;
  clock: Clock;
  onError: (error: unknown) => void;
}

export interface OutboxSink extends AuditSink {
  /** Resolves once every write started so far has ended (the command line waits before it exits). */
  flush(): Promise<void>;
}

export function createOutboxSink(deps: OutboxSinkDeps): OutboxSink {
  const writes = new Set<Promise<void>>();
  return {
    record(event, _origin, options) {
      if (options?.inOutbox || (deps.subscribed && !deps.subscribed(event.type))) return;
      const write = deps.outbox()
        .then((outbox) => outbox.append(outboxEventOf(event, deps.clock)))
        .then(() => undefined, deps.onError)
        .finally(() => writes.delete(write));
      writes.add(write);
    },
    async flush() {
      await Promise.all([...writes]);
    },
  };
}
