/**
 * Users: adding local accounts, finding, listing, flagging and removing accounts of any source.
 * A local username is stored in the canonical form sign-in looks it up by, so a second account
 * by another spelling of a name (`"ALICE "` beside `alice`) is a conflict, not a dead account.
 */
import { hashPassword } from '../sources/passwords.ts';
import type { SignInSourceKind, UserFlag, UserInput, UserRecord, Versioned } from '../store/records.ts';
import type { DurableStore, PageRequest } from '../store/types.ts';
import { randomToken } from '../tokens/opaque.ts';
import { createOnly } from './create-only.ts';
import { AdminError, staleOrGone } from './errors.ts';
import { readPage, type Page } from './pages.ts';
import { canonicalUsername, isPlainText } from './rules.ts';
import { NEW_USER_DEFAULTS, profileProblems, refusePasswordOrHash, refuseProfileProblems } from './user-fields.ts';

/** A local account to add: its profile (the full name is made of the parts given) and password. */
export interface NewLocalUser {
  username: string;
  /** The password, or `passwordHash`: a hash made elsewhere (src/sources/password-hashes.ts), stored as given. */
  password?: string | undefined;
  passwordHash?: string | undefined;
  givenName: string | null;
  familyName: string | null;
  email: string | null;
  emailVerified: boolean;
  phoneNumber: string | null;
  phoneNumberVerified: boolean;
  roles: string[];
}

function refuseProblems(input: NewLocalUser): void {
  refuseProfileProblems(input.username, profileProblems({
    username: input.username, given_name: input.givenName, family_name: input.familyName,
    email: input.email, phone_number: input.phoneNumber, roles: input.roles,
  }));
  refusePasswordOrHash({ password: input.password, password_hash: input.passwordHash }, input.username, true);
}

export async function createUser(durable: DurableStore, input: NewLocalUser): Promise<{ kind: 'created'; user: UserRecord }> {
  refuseProblems(input);
  const username = canonicalUsername(input.username);
  const taken = (store: DurableStore) => store.users.getByUsername('local', username);
  // Named as typed: the administrator recognises their own spelling.
  if (await taken(durable)) throw new AdminError('conflict', `user ${input.username} already exists`);
  const passwordHash = input.passwordHash ?? (await hashPassword(input.password ?? ''));
  const id = randomToken(16);
  const { givenName, familyName } = input;
  const user: UserInput = {
    ...NEW_USER_DEFAULTS,
    id, source: 'local', subject: id, username, passwordHash, givenName, familyName,
    // The full name (OpenID Connect `name` claim) as the parts given.
    name: [givenName, familyName].filter((part) => part !== null).join(' ') || null,
    email: input.email, emailVerified: input.emailVerified,
    phoneNumber: input.phoneNumber, phoneNumberVerified: input.phoneNumberVerified,
    roles: [...new Set(input.roles)],
  };
  await createOnly(durable, `user ${input.username}`, taken, (tx) => tx.users.upsert(user));
  const stored = await durable.users.getById(id);
  if (!stored) throw new AdminError('not_found', `user ${input.username} vanished as it was created`);
  return { kind: 'created', user: stored };
}

/**
 * An account by username: first among the users of `sources[0]` (the configured sign-in
 * source), then among the others (a deployment that changed its source still administers the
 * old records). Local names are looked up by their canonical form, as sign-in does.
 */
export async function findUser(durable: DurableStore, username: string, sources: readonly SignInSourceKind[]): Promise<UserRecord> {
  for (const source of new Set([...sources, 'local', 'ldap', 'oidc'] as const)) {
    const user = await durable.users.getByUsername(source, source === 'local' ? canonicalUsername(username) : username);
    if (user) return user;
  }
  throw new AdminError('not_found', `no user named ${username}`);
}

/** An account by its `sub`, among the users of each source in turn (`sources[0]` first, as findUser). */
export async function findUserBySubject(durable: DurableStore, subject: string, sources: readonly SignInSourceKind[]): Promise<UserRecord> {
  // A subject with a control character (a NUL, which PostgreSQL refuses) names no account.
  if (subject !== '' && isPlainText(subject)) {
    for (const source of new Set([...sources, 'local', 'ldap', 'oidc'] as const)) {
      const user = await durable.users.getBySubject(source, subject);
      if (user) return user;
    }
  }
  throw new AdminError('not_found', `no user with sub ${subject}`);
}

/** The account of a `sub` and its row version (the API's ETag), read together. */
export async function findVersionedUserBySubject(durable: DurableStore, subject: string, sources: readonly SignInSourceKind[]): Promise<Versioned<UserRecord>> {
  const user = await findUserBySubject(durable, subject, sources);
  const versioned = await durable.users.getVersioned(user.id);
  if (!versioned) throw new AdminError('not_found', `no user with sub ${subject}`);
  return versioned;
}

export async function listUsers(durable: DurableStore): Promise<UserRecord[]> {
  return durable.users.list();
}

/** Users in id order; with `username`, only those of that name (as sign-in compares names: case aside). */
export function usersPage(durable: DurableStore, request: PageRequest & { username?: string | undefined }): Promise<Page<UserRecord>> {
  if (request.username !== undefined && !isPlainText(request.username)) return Promise.resolve({ items: [], next: undefined });
  return readPage((r) => durable.users.page({ ...r, username: request.username }), (user) => user.id, request);
}

export async function setUserFlag(durable: DurableStore, user: UserRecord, flag: UserFlag, value: boolean): Promise<{ kind: 'updated'; user: UserRecord }> {
  if (!(await durable.users.update(user.id, { [flag]: value }))) throw new AdminError('not_found', `no user named ${user.username}`);
  return { kind: 'updated', user: { ...user, [flag]: value } };
}

/**
 * Deleting the row also deletes the user's consents and refresh token families (ON DELETE
 * CASCADE); the database first records their tokens as revoked (as it does when a user is
 * locked or flagged: migration 2026-11-24-0004), and every running instance hears of it.
 */
export async function removeUser(durable: DurableStore, user: UserRecord, ifVersion?: number): Promise<{ kind: 'removed'; user: UserRecord }> {
  if (await durable.users.remove(user.id, ifVersion)) return { kind: 'removed', user };
  if (ifVersion === undefined) throw new AdminError('not_found', `no user named ${user.username}`);
  throw staleOrGone((await durable.users.getById(user.id)) !== undefined, `user ${user.subject}`);
}
