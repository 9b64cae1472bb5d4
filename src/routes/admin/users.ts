/** `/users`: list (in username order, found by username, email or the start of a name), create a local account, read, change, remove, set the password. */
import { z } from 'zod';
import { userDocument } from '../../admin/documents.ts';
import { userSchema } from '../../admin/input-schemas.ts';
import { updateUser } from '../../admin/user-update.ts';
import { userPageWire, userWire } from '../../admin/answer-schemas.ts';
import { countUsers, createUser, findUserBySubject, findVersionedUserBySubject, removeUser, usersPage } from '../../admin/users.ts';
import type { UserRecord } from '../../store/records.ts';
import type { AdminApiDeps } from './deps.ts';
import { operation, type Operation } from './operation.ts';
import { pageAnswer, pageQueryFields, pageRequest, totalIfAsked } from './keyset.ts';

const PROFILE = { given_name: true, family_name: true, email: true, email_verified: true, phone_number: true, phone_number_verified: true, roles: true } as const;
const password = z.string().describe('Under the password policy of the password change page.');
const newUser = userSchema.pick({ username: true, ...PROFILE, password_hash: true }).extend({ password: password.optional() });
// RFC 7396: a member left out is kept, null clears it. The password has its own resource.
// A new username keeps the user's sub (and so every token and consent), in the canonical form.
const userPatch = userSchema.pick({ ...PROFILE, name: true, locked: true, must_change_password: true, must_enrol_mfa: true })
  .extend({ username: userSchema.shape.username.optional().describe('A local account\'s new username (stored trimmed, in lower case); its sub stays.') });
const newPassword = z.strictObject({ password });
const listQuery = z.strictObject({
  ...pageQueryFields,
  username: z.string().optional().describe('Only the users of this username, exactly (case aside, as sign-in compares names).'),
  email: z.string().optional().describe('Only the users of this email address, exactly (case aside).'),
  q: z.string().optional().describe('Only the users whose username, email, given name or family name starts with this (case aside).'),
});

/** The user a path names by `sub`. */
const userOf = (deps: AdminApiDeps, params: Record<string, string>): Promise<UserRecord> => findUserBySubject(deps.durable, params.id ?? '', [deps.signInSource]);
const userAnswer = (user: UserRecord, version: number | undefined, status = 200) => ({ status, body: userDocument(user), version });

export const USER_OPERATIONS: Operation[] = [
  operation<undefined, z.output<typeof listQuery>>({
    method: 'GET', path: '/users', operationId: 'listUsers', summary: 'List users by username (case aside); find them by username, email or the start of a name', query: listQuery,
    responses: { 200: { description: 'A page of users (total with count=true)', body: userPageWire } },
    handle: async ({ deps, query }) => {
      const request = pageRequest(query);
      const filters = { username: query.username, email: query.email, q: query.q };
      const page = await usersPage(deps.durable, { ...request, ...filters });
      return pageAnswer(page, userDocument, { limit: request.limit, filters, total: await totalIfAsked(query, () => countUsers(deps.durable, filters)) });
    },
  }),
  operation<z.output<typeof newUser>>({
    method: 'POST', path: '/users', operationId: 'createUser', summary: 'Add a local account', idempotent: true,
    body: { schema: newUser, mediaType: 'application/json' },
    responses: { 201: { description: 'The user', body: userWire, etag: true } },
    handle: async ({ deps, body, actor }) => {
      const { user: { record: user, version } } = await createUser(deps, {
        username: body.username, password: body.password, passwordHash: body.password_hash, givenName: body.given_name ?? null, familyName: body.family_name ?? null,
        email: body.email ?? null, emailVerified: body.email_verified ?? false, phoneNumber: body.phone_number ?? null,
        phoneNumberVerified: body.phone_number_verified ?? false, roles: body.roles ?? [],
      }, actor, Object.keys(body));
      return { ...userAnswer(user, version, 201), location: `/users/${encodeURIComponent(user.subject)}` };
    },
  }),
  operation({
    method: 'GET', path: '/users/{id}', operationId: 'getUser', summary: 'One user, by sub', responses: { 200: { description: 'The user', body: userWire, etag: true } },
    handle: async ({ deps, params }) => {
      const { record, version } = await findVersionedUserBySubject(deps.durable, params.id ?? '', [deps.signInSource]);
      return userAnswer(record, version);
    },
  }),
  operation<z.output<typeof userPatch>>({
    method: 'PATCH', path: '/users/{id}', operationId: 'updateUser', ifMatch: true,
    summary: 'Change a user (JSON merge patch, RFC 7396); locking or flagging a user ends their tokens',
    body: { schema: userPatch, mediaType: 'application/merge-patch+json' },
    responses: { 200: { description: 'The user as changed', body: userWire, etag: true } },
    handle: async ({ deps, params, body, ifVersion, actor }) => {
      const { user: { record, version } } = await updateUser(deps, await userOf(deps, params), body, actor, { ifVersion });
      return userAnswer(record, version);
    },
  }),
  operation({
    method: 'DELETE', path: '/users/{id}', operationId: 'deleteUser', summary: 'Remove a user (their tokens end)', ifMatch: true,
    responses: { 204: { description: 'Removed' } },
    handle: async ({ deps, params, ifVersion, actor }) => {
      await removeUser(deps, await userOf(deps, params), actor, ifVersion);
      return { status: 204 };
    },
  }),
  operation<z.output<typeof newPassword>>({
    method: 'PUT', path: '/users/{id}/password', operationId: 'setUserPassword', summary: "Set a local user's password; their tokens end", ifMatch: true,
    body: { schema: newPassword, mediaType: 'application/json' },
    responses: { 200: { description: 'The user', body: userWire, etag: true } },
    handle: async ({ deps, params, body, ifVersion, actor }) => {
      // An explicit set: the user's tokens end even when the password is the current one.
      const { user: { record, version } } = await updateUser(deps, await userOf(deps, params), { password: body.password }, actor, { ifVersion, explicit: true });
      return userAnswer(record, version);
    },
  }),
];
