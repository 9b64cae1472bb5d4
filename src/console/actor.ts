/** The console's administrator as the actor of the changes src/admin/ makes: `actor` `console` and their `sub`. */
import type { ChangeActor } from '../admin/recorded-change.ts';
import type { AuditEvent } from '../events/audit-events.ts';

export function consoleActor(adminSub: string, logged: (event: AuditEvent) => void): ChangeActor {
  return { by: { actor: 'console', admin_sub: adminSub }, logged };
}
