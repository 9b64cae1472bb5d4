/**
 * The events of a change that has a database transaction are written in that transaction: they
 * reach the outbox (and so the webhooks) if and only if the change commits, and a process killed
 * right after answering loses none. This is the one place such events are written; whatever else
 * records an event durably (an audit log's row) joins it here.
 */
import type { Clock } from '../clock.ts';
import type { DurableStore } from '../store/types.ts';
import type { AuditEvent } from './audit-events.ts';
import { outboxEventOf } from './outbox-sink.ts';
import type { Audit, EventContext } from './record.ts';

/** A transaction's handle, as far as recording needs it. */
export interface RecordingTransaction {
  outbox: Pick<DurableStore['outbox'], 'appendMany'>;
}

/**
 * Writes `events` on the transaction's handle, each with `context` (the request's, where there
 * is one); the caller logs them `{ inOutbox: true }` once it committed.
 */
export async function recordInTransaction(tx: RecordingTransaction, events: readonly AuditEvent[], clock: Clock, context?: EventContext): Promise<void> {
  if (events.length === 0) return;
  await tx.outbox.appendMany(events.map((event) => outboxEventOf(event, clock, context)));
}

/** Where a change's events come from (the request's context) and go once it committed (the log line). */
export interface ChangeRecorder {
  /** The context of the change's events; none from the command line. */
  context?: EventContext | undefined;
  /** Logs an event its change wrote to the outbox, once the change committed. */
  logged(event: AuditEvent): void;
}

/** The recorder of a change made where `audit` records: its context, and its log line once committed. */
export function recorderOf(audit: Audit): ChangeRecorder {
  return { context: audit.context?.(), logged: (event) => audit(event, { inOutbox: true }) };
}

/** What a change's write made: its result, and the events that record it (none: nothing to record). */
export interface RecordedWrite<T> {
  result: T;
  events: readonly AuditEvent[];
}

/**
 * Runs `write` in one transaction with its events: they are written if and only if it commits
 * (a write that throws records nothing). Once committed, each is logged through `recorder`.
 */
export async function recordedTransaction<T>(durable: Pick<DurableStore, 'transaction'>, clock: Clock, recorder: ChangeRecorder, write: (tx: DurableStore) => Promise<RecordedWrite<T>>): Promise<T> {
  const { result, events } = await durable.transaction(async (tx) => {
    const written = await write(tx);
    await recordInTransaction(tx, written.events, clock, recorder.context);
    return written;
  });
  for (const event of events) recorder.logged(event);
  return result;
}
