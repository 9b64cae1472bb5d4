/**
 * The audit event of a change made from the command line: one `admin_change` per command that
 * changes something, recorded once the change is done (a refused command records nothing);
 * where the change is one transaction, its event is written to the outbox inside it.
 */
import { recordedChange, type ChangeFields } from '../admin/recorded-change.ts';
import type { AdminChange } from '../events/audit-events.ts';
import type { DurableStore } from '../store/types.ts';
import type { CliContext } from './context.ts';

export function auditChange(context: CliContext, change: Omit<AdminChange, 'type' | 'actor'>): void {
  context.audit({ type: 'admin_change', actor: 'cli', ...change });
}

/**
 * Makes the change and writes its event to the outbox in one transaction (webhooks hear of it
 * if and only if it commits), then logs the event.
 */
export async function changeRecorded<T>(context: CliContext, durable: DurableStore, change: ChangeFields, write: (tx: DurableStore) => Promise<T>): Promise<T> {
  const { result, event } = await recordedChange({ durable, clock: context.clock }, { actor: 'cli' }, change, write);
  context.audit(event, { inOutbox: true });
  return result;
}
