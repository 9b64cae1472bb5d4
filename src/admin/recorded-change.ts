/**
 * The one path of an administrative write: validated before, then written and its events
 * recorded in one transaction (src/events/in-transaction.ts), the event reaching the outbox (and
 * the webhooks subscribed to it) if and only if the change commits, together with what the
 * database does with it (a user locked or removed loses their tokens by trigger, in the same
 * transaction). Once committed, each event is logged through the actor (never written again).
 */
import type { Clock } from '../clock.ts';
import type { AdminChange, AuditEvent } from '../events/audit-events.ts';
import { recordedTransaction, type ChangeRecorder } from '../events/in-transaction.ts';
import type { DurableStore } from '../store/types.ts';
import { refuseConstraintViolations } from './database-errors.ts';

/**
 * Who makes a change (the command line, the administration API's calling client, or the
 * console's administrator), the context of its events (the request's; the command line has
 * none), and where they are logged.
 */
export interface ChangeActor extends ChangeRecorder {
  by: { actor: 'cli' } | { actor: 'api'; client_id: string } | { actor: 'console'; admin_sub: string };
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
  return refuseConstraintViolations(subject, () =>
    recordedTransaction(deps.durable, deps.clock, actor, async (tx) => {
      const written = await write(tx);
      const events: AuditEvent[] = [...(written.events ?? []), ...(written.change ? [{ type: 'admin_change' as const, ...actor.by, ...written.change }] : [])];
      return { result: written.result, events };
    }),
  );
}
