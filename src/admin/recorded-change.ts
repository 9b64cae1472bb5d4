/**
 * The one path of an administrative write: validated before, then written and its events
 * recorded in one transaction (src/events/in-transaction.ts), the event reaching the outbox (and
 * the webhooks subscribed to it) if and only if the change commits, together with what the
 * database does with it (a user locked or removed loses their tokens by trigger, in the same
 * transaction). Once committed, each event is logged through the actor (never written again).
 */
import type { Clock } from '../clock.ts';
import type { AdminChange, AuditEvent } from '../events/audit-events.ts';
import { recordInTransaction } from '../events/in-transaction.ts';
import type { DurableStore } from '../store/types.ts';
import { refuseConstraintViolations } from './database-errors.ts';

/** Who makes a change (the command line, the administration API's calling client, or the console's administrator), and where its events are logged. */
export interface ChangeActor {
  by: { actor: 'cli' } | { actor: 'api'; client_id: string } | { actor: 'console'; admin_sub: string };
  /** Logs an event its change wrote to the outbox, once the change committed. */
  logged(event: AuditEvent): void;
}

export type ChangeFields = Omit<AdminChange, 'type' | 'actor' | 'client_id' | 'admin_sub'>;

/** What a write made: its result, the change it made (absent: nothing changed, no event), and other events of it. */
export interface Written<T> {
  result: T;
  change?: ChangeFields | undefined;
  events?: readonly AuditEvent[];
}

export interface ChangeDeps {
  durable: DurableStore;
  clock: Clock;
}

/**
 * Runs `write` in a transaction and records its events in it. A database constraint violation
 * becomes an AdminError naming `subject` (e.g. "client web").
 */
export async function recordedChange<T>(deps: ChangeDeps, actor: ChangeActor, subject: string, write: (tx: DurableStore) => Promise<Written<T>>): Promise<T> {
  const { result, events } = await refuseConstraintViolations(subject, () =>
    deps.durable.transaction(async (tx) => {
      const written = await write(tx);
      const events = [...(written.events ?? []), ...(written.change ? [{ type: 'admin_change' as const, ...actor.by, ...written.change }] : [])];
      await recordInTransaction(tx, events, deps.clock);
      return { result: written.result, events };
    }),
  );
  for (const event of events) actor.logged(event);
  return result;
}
