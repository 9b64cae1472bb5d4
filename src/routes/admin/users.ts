/** `/users`: list (by username too), create a local account, read, change, remove, set the password. */
import { z } from 'zod';
import { userDocument } from '../../admin/documents.ts';
import { userSchema } from '../../admin/seed-schema.ts';
import { updateUser } from '../../admin/user-update.ts';
import { createUser, findUserBySubject, findVersionedUserBySubject, removeUser, usersPage } from '../../admin/users.ts';
import type { UserRecord } from '../../store/records.ts';
import type { AdminApiDeps } from './deps.ts';
import { operation, type Operation } from './operation.ts';
import { pageAnswer, pageQueryFields, pageRequest } from './pages.ts';

const PROFILE = { given_name: true, family_name: true, email: true, email_verified: true, phone_number: true, phone_number_verified: true, roles: true } as const;
const password = z.string().describe('Under the password policy of the password change page.');
const newUser = userSchema.pick({ username: true, ...PROFILE, password_hash: true }).extend({ password: password.optional() });
// RFC 7396: a member left out is kept, null clears it. The password has its own resource.
const userPatch = userSchema.pick({ ...PROFILE, name: true, locked: true, must_change_password: true, must_enrol_mfa: true });
const newPassword = z.strictObject({ password });
const listQuery = z.strictObject({ ...pageQueryFields, username: z.string().optional().describe('Only the users of this username (compared as sign-in does: case aside).') });

/** The user a path names by `sub`. */
const userOf = (deps: AdminApiDeps, params: Record<string, string>): Promise<UserRecord> => findUserBySubject(deps.durable, params.id ?? '', [deps.signInSource]);
const userAnswer = (user: UserRecord, version: number | undefined, status = 200) => ({ status, body: userDocument(user), version });
const updateDeps = (deps: AdminApiDeps) => ({ durable: deps.durable, secret: deps.secret, clock: deps.clock });

export const USER_OPERATIONS: Operation[] = [
  operation<undefined, z.output<typeof listQuery>>({
    method: 'GET', path: '/users', operationId: 'listUsers', summary: 'List users, in id order', query: listQuery,
    responses: { 200: 'A page of users' },
    handle: async ({ deps, query }) => {
      const request = pageRequest(query);
      const page = await usersPage(deps.durable, { ...request, username: query.username });
      return pageAnswer(page, userDocument, request.limit, query.username === undefined ? {} : { username: query.username });
    },
  }),
  operation<z.output<typeof newUser>>({
    method: 'POST', path: '/users', operationId: 'createUser', summary: 'Add a local account', idempotent: true,
    body: { schema: newUser, mediaType: 'application/json' },
    responses: { 201: 'The user' },
    handle: async ({ deps, body, changed }) => {
      const { user } = await createUser(deps.durable, {
        username: body.username, password: body.password, passwordHash: body.password_hash, givenName: body.given_name ?? null, familyName: body.family_name ?? null,
        email: body.email ?? null, emailVerified: body.email_verified ?? false, phoneNumber: body.phone_number ?? null,
        phoneNumberVerified: body.phone_number_verified ?? false, roles: body.roles ?? [],
      });
      changed({ action: 'create', resource: 'user', resource_id: user.subject, fields: Object.keys(body) });
      const { version } = await findVersionedUserBySubject(deps.durable, user.subject, ['local']);
      return { ...userAnswer(user, version, 201), location: `/users/${encodeURIComponent(user.subject)}` };
    },
  }),
  operation({
    method: 'GET', path: '/users/{id}', operationId: 'getUser', summary: 'One user, by sub', responses: { 200: 'The user' },
    handle: async ({ deps, params }) => {
      const { record, version } = await findVersionedUserBySubject(deps.durable, params.id ?? '', [deps.signInSource]);
      return userAnswer(record, version);
    },
  }),
  operation<z.output<typeof userPatch>>({
    method: 'PATCH', path: '/users/{id}', operationId: 'updateUser', ifMatch: true,
    summary: 'Change a user (JSON merge patch, RFC 7396); locking or flagging a user ends their tokens',
    body: { schema: userPatch, mediaType: 'application/merge-patch+json' },
    responses: { 200: 'The user as changed' },
    handle: async ({ deps, params, body, ifVersion, changed }) => {
      const user = await userOf(deps, params);
      const updated = await updateUser(updateDeps(deps), user, body, ifVersion);
      if (updated.changed.length > 0) changed({ action: 'update', resource: 'user', resource_id: user.subject, fields: updated.changed });
      return userAnswer(updated.user, updated.version);
    },
  }),
  operation({
    method: 'DELETE', path: '/users/{id}', operationId: 'deleteUser', summary: 'Remove a user (their tokens end)', ifMatch: true,
    responses: { 204: 'Removed' },
    handle: async ({ deps, params, ifVersion, changed }) => {
      const user = await userOf(deps, params);
      await removeUser(deps.durable, user, ifVersion);
      changed({ action: 'delete', resource: 'user', resource_id: user.subject, fields: [] });
      return { status: 204 };
    },
  }),
  operation<z.output<typeof newPassword>>({
    method: 'PUT', path: '/users/{id}/password', operationId: 'setUserPassword', summary: "Set a local user's password; their tokens end", ifMatch: true,
    body: { schema: newPassword, mediaType: 'application/json' },
    responses: { 200: 'The user' },
    handle: async ({ deps, params, body, ifVersion, changed }) => {
      const user = await userOf(deps, params);
      const updated = await updateUser(updateDeps(deps), user, { password: body.password }, ifVersion);
      if (updated.changed.length > 0) changed({ action: 'update', resource: 'user', resource_id: user.subject, fields: updated.changed });
      return userAnswer(updated.user, updated.version);
    },
  }),
];
