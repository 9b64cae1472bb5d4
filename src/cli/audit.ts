/**
 * The audit events of the command line. A change of src/admin/ records its events in its own
 * transaction (admin/recorded-change.ts) and logs them here once committed; what has no
 * transaction (resealing spans the key manager too) is logged once done. A refused command
 * records nothing.
 */
import type { ChangeActor, ChangeDeps } from '../admin/recorded-change.ts';
import type { AdminChange } from '../events/audit-events.ts';
import type { DurableStore } from '../store/types.ts';
import type { CliContext } from './context.ts';

export function auditChange(context: CliContext, change: Omit<AdminChange, 'type' | 'actor'>): void {
  context.audit({ type: 'admin_change', actor: 'cli', ...change });
}

/** The command line as the actor of a change: its events go to the audit lines on stderr. */
export function cliActor(context: CliContext): ChangeActor {
  return { by: { actor: 'cli' }, logged: (event) => context.audit(event, { inOutbox: true }) };
}

/** What an administrative write of the command line needs. */
export async function changeDeps(context: CliContext, durable?: DurableStore): Promise<ChangeDeps> {
  return { durable: durable ?? (await context.openDurable()), clock: context.clock };
}
