/** The console's administrator as the actor of the changes src/admin/ makes: `actor` `console` and their `sub`. */
import type { ChangeActor } from '../admin/recorded-change.ts';
import type { AuditEvent } from '../events/audit-events.ts';
import type { EventContext } from '../events/record.ts';

/** `context`: the request's (its id and source address), which the change's events carry. */
export function consoleActor(adminSub: string, logged: (event: AuditEvent) => void, context?: EventContext): ChangeActor {
  return { by: { actor: 'console', admin_sub: adminSub }, context, logged };
}
