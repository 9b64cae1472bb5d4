/**
 * The command line as the actor of its changes: each change of src/admin/ records its events in
 * its own transaction (admin/recorded-change.ts) and logs them here once committed. The command
 * line has no request: its events carry no request id, address or client. A refused command
 * records nothing.
 */
import type { ChangeActor, ChangeDeps } from '../admin/recorded-change.ts';
import type { DurableStore } from '../store/types.ts';
import type { CliContext } from './context.ts';

/** The command line as the actor of a change: its events go to the audit lines on stderr. */
export function cliActor(context: CliContext): ChangeActor {
  return { by: { actor: 'cli' }, logged: (event) => context.audit(event, { inOutbox: true }) };
}

/** What an administrative write of the command line needs. */
export async function changeDeps(context: CliContext, durable?: DurableStore): Promise<ChangeDeps> {
  return { durable: durable ?? (await context.openDurable()), clock: context.clock };
}
