/**
 * A user's sessions and applications on their console page (`/admin/users/{sub}`): "End" and
 * "End all" of each, as the API's /users/{sub}/sessions and the account page's applications do.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ChangeFields } from '../../admin/recorded-change.ts';
import { AdminError } from '../../admin/errors.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import { auditOf } from '../shared/audit.ts';
import type { ConsoleDeps } from './deps.ts';
import { formOf, textOf } from './forms.ts';
import { createUserPage } from './user-page.ts';

export function userConnectionRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { admin: adminDeps } = deps;
  const { find, showUser, userAt, onUser } = createUserPage(deps);

  /** A change of the user's sessions or applications (no transaction of ours): recorded once done. */
  function recordOutside(request: FastifyRequest, admin: ConsoleAdmin, change: ChangeFields): void {
    auditOf(deps.audit, request)({ type: 'admin_change', actor: 'console', admin_sub: admin.sub, ...change });
  }

  app.post('/users/:sub/sessions/end', onUser('change', async (request, reply, admin, sub) => {
    const form = formOf(request);
    const user = await userAt(sub, form);
    const id = textOf(form, 'session_id') ?? '';
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(id)) throw new AdminError('not_found', `user ${sub} has no such session`);
    await adminDeps.userSessions.endUserSession(user.id, id);
    recordOutside(request, admin, { action: 'delete', resource: 'user', resource_id: user.subject, fields: ['sessions'] });
    return showUser(reply, admin, await find(sub), { notice: 'The session has ended.' });
  }));

  app.post('/users/:sub/sessions/end-all', onUser('change', async (request, reply, admin, sub) => {
    const user = await userAt(sub, formOf(request));
    await adminDeps.userSessions.endUserSessions(user.id);
    recordOutside(request, admin, { action: 'delete', resource: 'user', resource_id: user.subject, fields: ['sessions'] });
    return showUser(reply, admin, await find(sub), { notice: 'Every session has ended.' });
  }));

  app.post('/users/:sub/applications/end', onUser('change', async (request, reply, admin, sub) => {
    const form = formOf(request);
    const user = await userAt(sub, form);
    await deps.services.userSessions.removeApplicationAccess(user.id, textOf(form, 'client_id') ?? '');
    recordOutside(request, admin, { action: 'delete', resource: 'user', resource_id: user.subject, fields: ['applications'] });
    return showUser(reply, admin, await find(sub), { notice: 'The application\'s access has ended.' });
  }));

  app.post('/users/:sub/applications/end-all', onUser('change', async (request, reply, admin, sub) => {
    const user = await userAt(sub, formOf(request));
    for (const application of await deps.services.userSessions.listApplications(user.id)) {
      await deps.services.userSessions.removeApplicationAccess(user.id, application.clientId);
    }
    recordOutside(request, admin, { action: 'delete', resource: 'user', resource_id: user.subject, fields: ['applications'] });
    return showUser(reply, admin, await find(sub), { notice: 'Every application\'s access has ended.' });
  }));
}
