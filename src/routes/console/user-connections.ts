/**
 * A user's sessions and applications on their console page (`/admin/users/{sub}`): "End" and
 * "End all" of each, as the API's /users/{sub}/sessions and the account page's applications do.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AdminError } from '../../admin/errors.ts';
import type { Recording } from '../../admin/sessions.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import type { UserRecord } from '../../store/records.ts';
import type { ConsoleDeps } from './deps.ts';
import { actorOf, formOf, textOf } from './forms.ts';
import { createUserPage } from './user-page.ts';

export function userConnectionRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { admin: adminDeps } = deps;
  const { find, showUser, userAt, onUser } = createUserPage(deps);

  /** The `admin_change` of ending the user's sessions or applications, written in the transaction of their tokens' revocation. */
  function recordedAs(request: FastifyRequest, admin: ConsoleAdmin, user: UserRecord, field: 'sessions' | 'applications'): Recording<unknown> {
    const actor = actorOf(request, admin, deps);
    return { recorder: actor, eventsOf: () => [{ type: 'admin_change', ...actor.by, action: 'delete', resource: 'user', resource_id: user.subject, fields: [field] }] };
  }

  app.post('/users/:sub/sessions/end', onUser('change', async (request, reply, admin, sub) => {
    const form = formOf(request);
    const user = await userAt(sub, form);
    const id = textOf(form, 'session_id') ?? '';
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(id)) throw new AdminError('not_found', `user ${sub} has no such session`);
    await adminDeps.userSessions.endUserSession(user.id, id, recordedAs(request, admin, user, 'sessions'));
    return showUser(reply, admin, await find(sub), { notice: 'The session has ended.' });
  }));

  app.post('/users/:sub/sessions/end-all', onUser('change', async (request, reply, admin, sub) => {
    const user = await userAt(sub, formOf(request));
    await adminDeps.userSessions.endUserSessions(user.id, recordedAs(request, admin, user, 'sessions'));
    return showUser(reply, admin, await find(sub), { notice: 'Every session has ended.' });
  }));

  app.post('/users/:sub/applications/end', onUser('change', async (request, reply, admin, sub) => {
    const form = formOf(request);
    const user = await userAt(sub, form);
    await deps.services.userSessions.removeApplicationAccess(user.id, textOf(form, 'client_id') ?? '', recordedAs(request, admin, user, 'applications'));
    return showUser(reply, admin, await find(sub), { notice: 'The application\'s access has ended.' });
  }));

  app.post('/users/:sub/applications/end-all', onUser('change', async (request, reply, admin, sub) => {
    const user = await userAt(sub, formOf(request));
    // Each application in a transaction of its own; the last one's carries the change (none: nothing changed).
    const applications = await deps.services.userSessions.listApplications(user.id);
    const recorded = recordedAs(request, admin, user, 'applications');
    for (const [i, application] of applications.entries()) {
      await deps.services.userSessions.removeApplicationAccess(user.id, application.clientId, i === applications.length - 1 ? recorded : { ...recorded, eventsOf: () => [] });
    }
    return showUser(reply, admin, await find(sub), { notice: 'Every application\'s access has ended.' });
  }));
}
