/**
 * The audit event of a change made from the command line: one `admin_change` per command that
 * changes something, recorded once the change is done (a refused command records nothing).
 */
import type { AdminChange } from '../events/audit-events.ts';
import type { CliContext } from './context.ts';

export function auditChange(context: CliContext, change: Omit<AdminChange, 'type' | 'actor'>): void {
  context.audit({ type: 'admin_change', actor: 'cli', ...change });
}
