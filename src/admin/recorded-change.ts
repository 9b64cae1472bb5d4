/**
 * An administrative change and its `admin_change` event in one transaction: the event reaches
 * the outbox (and the webhooks subscribed to it) if and only if the change commits, together
 * with what the database does with it (a user locked or removed loses their tokens by trigger,
 * in the same transaction). The caller logs the returned event with `{ inOutbox: true }`.
 */
import type { Clock } from '../clock.ts';
import type { AdminChange } from '../events/audit-events.ts';
import { outboxEventOf } from '../events/outbox-sink.ts';
import type { DurableStore } from '../store/types.ts';

/** Who makes a change: the command line, or the administration API's calling client. */
export type ChangeActor = { actor: 'cli' } | { actor: 'api'; client_id: string };

export type ChangeFields = Omit<AdminChange, 'type' | 'actor' | 'client_id'>;

export async function recordedChange<T>(
  deps: { durable: DurableStore; clock: Clock },
  actor: ChangeActor,
  change: ChangeFields,
  write: (tx: DurableStore) => Promise<T>,
): Promise<{ result: T; event: AdminChange }> {
  const event: AdminChange = { type: 'admin_change', ...actor, ...change };
  const result = await deps.durable.transaction(async (tx) => {
    const value = await write(tx);
    await tx.outbox.append(outboxEventOf(event, deps.clock));
    return value;
  });
  return { result, event };
}
