/**
 * `/admin/users`: search (`q`), "Create user", and a user's page: profile and roles ("Save"),
 * "Lock"/"Unlock", "Require password change", "Require second factor", "Reset second factors",
 * "Send password reset", and their second factors (their sessions and applications:
 * user-connections.ts). The same operations as the API's /users (and the command line's
 * `idp users reset-mfa`, the account page's "Forgot password?" mail).
 */
import type { FastifyInstance } from 'fastify';
import { userDocument } from '../../admin/documents.ts';
import { AdminError } from '../../admin/errors.ts';
import { decodeCursor, encodeCursor } from '../../admin/keyset.ts';
import { resetSecondFactors } from '../../admin/second-factors.ts';
import { updateUser, type UserPatch } from '../../admin/user-update.ts';
import { createUser, usersPage } from '../../admin/users.ts';
import { mayChange } from '../../console/access.ts';
import { auditOf } from '../shared/audit.ts';
import type { ConsoleDeps } from './deps.ts';
import { actorOf, formOf, refusalOf, versionOf } from './forms.ts';
import { consolePage } from './guard.ts';
import { renderConsole } from './render.ts';
import { newUserFields, newUserOf, typedUserValues, userPatchOf } from './user-forms.ts';
import { createUserPage } from './user-page.ts';

/** The account's buttons: each a change of one flag (a PATCH of the API), or an action of its own. */
const FLAG_ACTIONS: Record<string, { patch: UserPatch; notice: string }> = {
  lock: { patch: { locked: true }, notice: 'Locked: their sessions and tokens have ended.' },
  unlock: { patch: { locked: false }, notice: 'Unlocked.' },
  'require-password-change': { patch: { must_change_password: true }, notice: 'They must change their password at their next sign-in.' },
  'require-second-factor': { patch: { must_enrol_mfa: true }, notice: 'They must set up a second factor at their next sign-in.' },
};

export function userRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const base = `${deps.page.basePath}/admin`;
  const { admin: adminDeps } = deps;
  const { find, showUser, userAt, onUser } = createUserPage(deps);

  app.get('/users', consolePage(deps, 'users', 'read', async (request, reply, admin) => {
    const query = request.query as { q?: unknown; cursor?: unknown };
    const q = typeof query.q === 'string' ? query.q.trim() : '';
    const after = typeof query.cursor === 'string' ? decodeCursor(query.cursor) : undefined;
    const page = await usersPage(adminDeps.durable, { q: q || undefined, after, limit: 50 });
    const next = page.next === undefined ? undefined : new URLSearchParams({ ...(q ? { q } : {}), cursor: encodeCursor(page.next) }).toString();
    return renderConsole(reply, deps, admin, 'console/users', { title: 'Users', area: 'users', users: page.items.map(userDocument), q, next, mayChange: mayChange(admin.roles, 'users') });
  }));

  app.get('/users/new', consolePage(deps, 'users', 'change', async (_request, reply, admin) =>
    renderConsole(reply, deps, admin, 'console/user-new', { title: 'Create user', area: 'users', values: {} })));

  app.post('/users', consolePage(deps, 'users', 'change', async (request, reply, admin) => {
    const form = formOf(request);
    try {
      const { user } = await createUser(adminDeps, newUserOf(form), actorOf(request, admin, deps), newUserFields(form));
      return showUser(reply.header('location', `${base}/users/${encodeURIComponent(user.record.subject)}`), admin, user, { notice: 'User created.' }, 201);
    } catch (error) {
      const refusal = refusalOf(error);
      return renderConsole(reply, deps, admin, 'console/user-new', { title: 'Create user', area: 'users', refusal, values: typedUserValues(form) }, refusal.stale ? 409 : 400);
    }
  }));

  app.get('/users/:sub', onUser('read', async (_request, reply, admin, sub) => showUser(reply, admin, await find(sub))));

  app.post('/users/:sub', onUser('change', async (request, reply, admin, sub) => {
    const form = formOf(request);
    const user = await userAt(sub, form);
    const { user: written } = await updateUser(adminDeps, user, userPatchOf(form, user.source === 'local'), actorOf(request, admin, deps), { ifVersion: versionOf(form) });
    return showUser(reply, admin, written, { notice: 'Saved.' });
  }));

  for (const [path, { patch, notice }] of Object.entries(FLAG_ACTIONS)) {
    app.post(`/users/:sub/${path}`, onUser('change', async (request, reply, admin, sub) => {
      const form = formOf(request);
      const { user: written } = await updateUser(adminDeps, await userAt(sub, form), patch, actorOf(request, admin, deps), { ifVersion: versionOf(form) });
      return showUser(reply, admin, written, { notice });
    }));
  }

  app.post('/users/:sub/reset-second-factors', onUser('change', async (request, reply, admin, sub) => {
    const reset = await resetSecondFactors(adminDeps, await userAt(sub, formOf(request)), actorOf(request, admin, deps));
    return showUser(reply, admin, await find(sub), { notice: reset.kind === 'reset' ? 'Their second factors were removed: they set up a new one at their next sign-in.' : 'They had no second factor.' });
  }));

  app.post('/users/:sub/password-reset', onUser('change', async (request, reply, admin, sub) => {
    const user = await userAt(sub, formOf(request));
    const recovery = deps.services.recovery;
    if (!recovery || user.source !== 'local' || !user.email) throw new AdminError('invalid', `user ${user.username} cannot be sent a password reset: it needs a local account with an email address, and mail`);
    await recovery.requestFor(user.username, auditOf(deps.audit, request));
    return showUser(reply, admin, await find(sub), { notice: `A code to set a new password was sent to ${user.email} (at most 5 an hour).` });
  }));
}
