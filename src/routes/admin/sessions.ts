/**
 * `/users/{id}/sessions`: a user's refresh token families and browser sessions, listed, all
 * ended, or one ended, each with the tokens it let anyone obtain (src/admin/sessions.ts). They
 * are the user's: their ETag is the user's row version, and ending them needs If-Match like any
 * other DELETE, so an administrator acts on the user they read (not one since locked, renamed or
 * given new factors).
 */
import type { Recording, UserSessions } from '../../admin/sessions.ts';
import type { ChangeActor } from '../../admin/recorded-change.ts';
import { refuseOtherVersion } from '../../admin/errors.ts';
import { findVersionedUserBySubject } from '../../admin/users.ts';
import { endedSessionsWire, userSessionsWire, type UserSessionsWire } from '../../admin/answer-schemas.ts';
import type { UserRecord, Versioned } from '../../store/records.ts';
import { ApiProblem } from '../error-handler.ts';
import type { AdminApiDeps } from './deps.ts';
import { operation, type Operation } from './operation.ts';

const userOf = (deps: AdminApiDeps, params: Record<string, string>): Promise<Versioned<UserRecord>> => findVersionedUserBySubject(deps.durable, params.id ?? '', [deps.signInSource]);

/** The user at the version If-Match names. */
async function userAt(deps: AdminApiDeps, params: Record<string, string>, ifVersion: number | undefined): Promise<UserRecord> {
  const { record, version } = await userOf(deps, params);
  refuseOtherVersion(version, ifVersion, `user ${record.subject}`);
  return record;
}

function sessionsDocument(sessions: UserSessions): UserSessionsWire {
  return {
    refresh_token_families: sessions.refreshTokenFamilies.map((f) => ({
      id: f.id, client_id: f.clientId, created_at: f.createdAt.toISOString(), last_used_at: f.lastUsedAt.toISOString(), expires_at: f.expiresAt.toISOString(),
    })),
    browser_sessions: sessions.browserSessions.map((s) => ({
      id: s.id, created_at: s.createdAt.toISOString(), auth_time: s.authTime?.toISOString() ?? null, amr: s.amr, clients: s.clients,
    })),
  };
}

/** The `admin_change` of ending a user's sessions, written in the transaction of their tokens' revocation. */
const sessionsChange = (actor: ChangeActor, user: UserRecord): Recording<unknown> => ({
  recorder: actor,
  eventsOf: () => [{ type: 'admin_change', ...actor.by, action: 'delete', resource: 'user', resource_id: user.subject, fields: ['sessions'] }],
});

export const SESSION_OPERATIONS: Operation[] = [
  operation({
    method: 'GET', path: '/users/{id}/sessions', operationId: 'listUserSessions', summary: "A user's refresh token families and browser sessions",
    responses: { 200: { description: "The user's refresh token families and browser sessions", body: userSessionsWire, etag: true } },
    handle: async ({ deps, params }) => {
      const { record, version } = await userOf(deps, params);
      return { status: 200, body: sessionsDocument(await deps.userSessions.listUserSessions(record.id)), version };
    },
  }),
  operation({
    method: 'DELETE', path: '/users/{id}/sessions', operationId: 'endUserSessions', summary: "End every session of a user and revoke the user's tokens", ifMatch: true,
    responses: { 200: { description: 'How many sessions ended', body: endedSessionsWire } },
    handle: async ({ deps, params, ifVersion, actor }) => {
      const user = await userAt(deps, params, ifVersion);
      const ended = await deps.userSessions.endUserSessions(user.id, sessionsChange(actor, user));
      return { status: 200, body: { browser_sessions: ended.browserSessions, refresh_token_families: ended.refreshTokenFamilies } };
    },
  }),
  operation({
    method: 'DELETE', path: '/users/{id}/sessions/{session_id}', operationId: 'endUserSession', summary: 'End one session of a user (a refresh token family or a browser session) and revoke its tokens', ifMatch: true,
    responses: { 204: { description: 'Ended' } },
    handle: async ({ deps, params, ifVersion, actor }) => {
      const user = await userAt(deps, params, ifVersion);
      const sessionId = params.session_id ?? '';
      // Sessions are named by UUIDs and base64url ids: anything else (a NUL byte) names none.
      if (!/^[A-Za-z0-9_-]{1,200}$/.test(sessionId)) throw new ApiProblem(404, `user ${user.subject} has no such session`);
      await deps.userSessions.endUserSession(user.id, sessionId, sessionsChange(actor, user));
      return { status: 204 };
    },
  }),
];
