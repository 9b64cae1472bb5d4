/**
 * A user's page of the console (`/admin/users/{sub}`), shared by the routes that change the
 * account (users.ts) and those that end its sessions and applications (user-connections.ts):
 * finding the user, showing the page, refusing a change on it, and the version a form shows.
 */
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { userDocument } from '../../admin/documents.ts';
import { AdminError, refuseOtherVersion } from '../../admin/errors.ts';
import { findVersionedUserBySubject } from '../../admin/users.ts';
import { mayChange } from '../../console/access.ts';
import { factorKind, listFactors } from '../../factors/factor-kinds.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import type { UserRecord, Versioned } from '../../store/records.ts';
import type { ConsoleDeps } from './deps.ts';
import { formOf, refusalOf, versionOf, type FormBody, type Refusal } from './forms.ts';
import { consolePage } from './guard.ts';
import { renderConsole } from './render.ts';
import { typedUserValues, userFormValues } from './user-forms.ts';

type UserRequest = FastifyRequest<{ Params: { sub: string } }>;

export interface UserPageExtra {
  refusal?: Refusal;
  values?: Record<string, unknown>;
  notice?: string;
}

/** A handler on the user the path names. */
export type UserHandler = (request: FastifyRequest, reply: FastifyReply, admin: ConsoleAdmin, sub: string) => Promise<FastifyReply>;

export interface UserPage {
  find(sub: string): Promise<Versioned<UserRecord>>;
  showUser(reply: FastifyReply, admin: ConsoleAdmin, found: Versioned<UserRecord>, extra?: UserPageExtra, status?: number): Promise<FastifyReply>;
  /** The user the form names, at the version it shows. */
  userAt(sub: string, form: FormBody): Promise<UserRecord>;
  /** `handler` on the user the path names; its refusals on their page. */
  onUser(need: 'read' | 'change', handler: UserHandler): RouteHandlerMethod;
}

function actionsFor(user: UserRecord, canMail: boolean) {
  return [
    user.locked ? { path: 'unlock', label: 'Unlock' } : { path: 'lock', label: 'Lock', danger: true },
    ...(user.source === 'local' && !user.mustChangePassword ? [{ path: 'require-password-change', label: 'Require password change' }] : []),
    ...(!user.mustEnrolMfa ? [{ path: 'require-second-factor', label: 'Require second factor' }] : []),
    ...(user.factors.length > 0 ? [{ path: 'reset-second-factors', label: 'Reset second factors', danger: true }] : []),
    ...(canMail && user.source === 'local' && user.email ? [{ path: 'password-reset', label: 'Send password reset' }] : []),
  ];
}

export function createUserPage(deps: ConsoleDeps): UserPage {
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

  async function userAt(sub: string, form: FormBody): Promise<UserRecord> {
    const found = await find(sub);
    const version = versionOf(form);
    if (version === undefined) throw new AdminError('invalid', 'the form carries no version of the row it shows: open the page again');
    refuseOtherVersion(found.version, version, `user ${sub}`);
    return found.record;
  }

  const onUser = (need: 'read' | 'change', handler: UserHandler) =>
    consolePage(deps, 'users', need, async (request, reply, admin) => {
      const { sub } = (request as UserRequest).params;
      try {
        return await handler(request, reply, admin, sub);
      } catch (error) {
        return refused(reply, admin, sub, error, need === 'change' && request.url.endsWith(encodeURIComponent(sub)) ? typedUserValues(formOf(request)) : undefined);
      }
    });

  return { find, showUser, userAt, onUser };
}
