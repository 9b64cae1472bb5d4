/**
 * `/admin/users`: search (`q`), "Create user", and a user's page: profile and roles ("Save"),
 * "Lock"/"Unlock", "Require password change", "Require second factor", "Reset second factors",
 * "Send password reset", their second factors, and their sessions and applications, each with
 * "End" and "End all". The same operations as the API's /users (and the command line's
 * `idp users reset-mfa`, the account page's "Forgot password?" mail).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { userDocument } from '../../admin/documents.ts';
import { AdminError, refuseOtherVersion } from '../../admin/errors.ts';
import { decodeCursor, encodeCursor } from '../../admin/keyset.ts';
import { resetSecondFactors } from '../../admin/second-factors.ts';
import type { Recording } from '../../admin/sessions.ts';
import { updateUser, type UserPatch } from '../../admin/user-update.ts';
import { createUser, findVersionedUserBySubject, usersPage } from '../../admin/users.ts';
import { mayChange } from '../../console/access.ts';
import { factorKind, listFactors } from '../../factors/factor-kinds.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import type { UserRecord, Versioned } from '../../store/records.ts';
import { auditOf } from '../shared/audit.ts';
import type { ConsoleDeps } from './deps.ts';
import { actorOf, formOf, refusalOf, textOf, versionOf, type FormBody, type Refusal } from './forms.ts';
import { consolePage } from './guard.ts';
import { renderConsole } from './render.ts';
import { newUserFields, newUserOf, typedUserValues, userFormValues, userPatchOf } from './user-forms.ts';

type UserRequest = FastifyRequest<{ Params: { sub: string } }>;

interface UserPageExtra {
  refusal?: Refusal;
  values?: Record<string, unknown>;
  notice?: string;
}

/** The account's buttons: each a change of one flag (a PATCH of the API), or an action of its own. */
const FLAG_ACTIONS: Record<string, { patch: UserPatch; notice: string }> = {
  lock: { patch: { locked: true }, notice: 'Locked: their sessions and tokens have ended.' },
  unlock: { patch: { locked: false }, notice: 'Unlocked.' },
  'require-password-change': { patch: { must_change_password: true }, notice: 'They must change their password at their next sign-in.' },
  'require-second-factor': { patch: { must_enrol_mfa: true }, notice: 'They must set up a second factor at their next sign-in.' },
};

function actionsFor(user: UserRecord, canMail: boolean) {
  return [
    user.locked ? { path: 'unlock', label: 'Unlock' } : { path: 'lock', label: 'Lock', danger: true },
    ...(user.source === 'local' && !user.mustChangePassword ? [{ path: 'require-password-change', label: 'Require password change' }] : []),
    ...(!user.mustEnrolMfa ? [{ path: 'require-second-factor', label: 'Require second factor' }] : []),
    ...(user.factors.length > 0 ? [{ path: 'reset-second-factors', label: 'Reset second factors', danger: true }] : []),
    ...(canMail && user.source === 'local' && user.email ? [{ path: 'password-reset', label: 'Send password reset' }] : []),
  ];
}

export function userRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const base = `${deps.page.basePath}/admin`;
  const { admin: adminDeps } = deps;
  const find = (sub: string) => findVersionedUserBySubject(adminDeps.durable, sub, [adminDeps.signInSource]);

  async function connectionsOf(user: UserRecord) {
    const [sessions, applications] = await Promise.all([adminDeps.userSessions.listUserSessions(user.id), deps.services.userSessions.listApplications(user.id)]);
    return {
      sessions: [
        ...sessions.browserSessions.map((s) => ({ id: s.id, kind: 'Browser', since: s.createdAt.toISOString(), detail: [s.userAgent, s.address].filter(Boolean).join(', ') || 'browser session' })),
        ...sessions.refreshTokenFamilies.map((f) => ({ id: f.id, kind: 'Application', since: f.createdAt.toISOString(), detail: `${f.clientId}, last used ${f.lastUsedAt.toISOString()}` })),
      ],
      applications: applications.map((a) => ({ clientId: a.clientId, displayName: a.displayName, since: a.since.toISOString(), lastUsedAt: a.lastUsedAt?.toISOString() ?? null })),
    };
  }

  async function showUser(reply: FastifyReply, admin: ConsoleAdmin, found: Versioned<UserRecord>, extra: UserPageExtra = {}, status = 200): Promise<FastifyReply> {
    const user = userDocument(found.record);
    return renderConsole(reply, deps, admin, 'console/user', {
      title: `User ${user.username}`, area: 'users', user, version: found.version, mayChange: mayChange(admin.roles, 'users'),
      actions: actionsFor(found.record, deps.services.recovery !== undefined),
      factors: listFactors(found.record).map((f) => ({ label: factorKind(f.kind).label, name: f.name, remaining: f.remaining })),
      ...(await connectionsOf(found.record)),
      ...extra, values: extra.values ?? userFormValues(user),
    }, status);
  }

  async function refused(reply: FastifyReply, admin: ConsoleAdmin, sub: string, error: unknown, typed?: Record<string, unknown>): Promise<FastifyReply> {
    const refusal = refusalOf(error);
    if (refusal.notFound) return renderConsole(reply, deps, admin, 'console/message', { title: 'No such user', area: 'users', message: refusal.message, link: { href: `${base}/users`, text: 'Back to the users' } }, 404);
    return showUser(reply, admin, await find(sub), { refusal, ...(refusal.stale || !typed ? {} : { values: typed }) }, refusal.stale ? 409 : 400);
  }

  /** The user the form names, at the version it shows. */
  async function userAt(sub: string, form: FormBody): Promise<UserRecord> {
    const found = await find(sub);
    const version = versionOf(form);
    if (version === undefined) throw new AdminError('invalid', 'the form carries no version of the row it shows: open the page again');
    refuseOtherVersion(found.version, version, `user ${sub}`);
    return found.record;
  }

  /** The `admin_change` of ending the user's sessions or applications, written in the transaction of their tokens' revocation. */
  function recordedAs(request: FastifyRequest, admin: ConsoleAdmin, user: UserRecord, field: 'sessions' | 'applications'): Recording<unknown> {
    const actor = actorOf(request, admin, deps);
    return { recorder: actor, eventsOf: () => [{ type: 'admin_change', ...actor.by, action: 'delete', resource: 'user', resource_id: user.subject, fields: [field] }] };
  }

  /** `handler` on the user the path names; its refusals on their page. */
  const onUser = (need: 'read' | 'change', handler: (request: FastifyRequest, reply: FastifyReply, admin: ConsoleAdmin, sub: string) => Promise<FastifyReply>) =>
    consolePage(deps, 'users', need, async (request, reply, admin) => {
      const { sub } = (request as UserRequest).params;
      try {
        return await handler(request, reply, admin, sub);
      } catch (error) {
        return refused(reply, admin, sub, error, need === 'change' && request.url.endsWith(encodeURIComponent(sub)) ? typedUserValues(formOf(request)) : undefined);
      }
    });

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
