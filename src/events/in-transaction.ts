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

/** A transaction's handle, as far as recording needs it. */
export type RecordingTransaction = Pick<DurableStore, 'outbox'>;

/** Writes `events` on the transaction's handle; the caller logs them `{ inOutbox: true }` once it committed. */
export async function recordInTransaction(tx: RecordingTransaction, events: readonly AuditEvent[], clock: Clock): Promise<void> {
  if (events.length === 0) return;
  await tx.outbox.appendMany(events.map((event) => outboxEventOf(event, clock)));
}
