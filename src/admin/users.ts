/**
 * Users: adding local accounts, finding, listing, flagging and removing accounts of any source.
 * A local username is stored in the canonical form sign-in looks it up by, so a second account
 * by another spelling of a name (`"ALICE "` beside `alice`) is a conflict, not a dead account.
 */
import { hashPassword } from '../sources/passwords.ts';
import type { SignInSourceKind, UserFlag, UserInput, UserRecord, Versioned } from '../store/records.ts';
import type { DurableStore, PageRequest, UserFilter, UserPlace } from '../store/types.ts';
import { randomToken } from '../tokens/opaque.ts';
import { createOnly } from './create-only.ts';
import { AdminError, staleOrGone } from './errors.ts';
import { readPage, type Page } from './pages.ts';
import { canonicalUsername, isPlainText } from './rules.ts';
import { NEW_USER_DEFAULTS, profileProblems, refusePassword, refuseProfileProblems } from './user-fields.ts';

/** A local account to add: its profile (the full name is made of the parts given) and password. */
export interface NewLocalUser {
  username: string;
  password: string;
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
  refusePassword(input.password, input.username);
}

export async function createUser(durable: DurableStore, input: NewLocalUser): Promise<{ kind: 'created'; user: UserRecord }> {
  refuseProblems(input);
  const username = canonicalUsername(input.username);
  const taken = (store: DurableStore) => store.users.getByUsername('local', username);
  // Named as typed: the administrator recognises their own spelling.
  if (await taken(durable)) throw new AdminError('conflict', `user ${input.username} already exists`);
  const passwordHash = await hashPassword(input.password);
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

/** A user's place in the username order as a page key: the JSON array [name, id]. */
const placeKey = (place: UserPlace) => JSON.stringify([place.name, place.id]);

function placeOf(key: string): UserPlace {
  let parsed: unknown;
  try {
    parsed = JSON.parse(key);
  } catch {
    parsed = undefined;
  }
  if (Array.isArray(parsed) && parsed.length === 2 && parsed.every((part) => typeof part === 'string')) return { name: parsed[0] as string, id: parsed[1] as string };
  throw new AdminError('invalid', 'cursor is not one this list gave', [{ path: ['cursor'], message: 'is not a cursor this list gave (pass next_cursor back as it is)' }]);
}

/** Every name starts with the empty string: an empty `q` (a search box left empty) finds everyone. */
const searched = (filter: UserFilter): UserFilter => ({ ...filter, q: filter.q === '' ? undefined : filter.q });

/** A filter value with a control character (a NUL, which PostgreSQL refuses) matches no user. */
const matchesNoOne = (filter: UserFilter) => [filter.username, filter.email, filter.q].some((value) => value !== undefined && !isPlainText(value));

/**
 * Users in username order (case aside), a page at a time; with filters, only those they match:
 * `username` and `email` exactly, `q` the start of the username, email, given or family name.
 */
export async function usersPage(durable: DurableStore, request: PageRequest & UserFilter): Promise<Page<UserRecord>> {
  const { after, limit, ...given } = request;
  const filter = searched(given);
  if (matchesNoOne(filter)) return { items: [], next: undefined };
  const page = await readPage((r) => durable.users.page({ ...filter, after: r.after === undefined ? undefined : placeOf(r.after), limit: r.limit }), (row) => placeKey(row.place), { after, limit });
  return { items: page.items.map((row) => row.user), next: page.next };
}

/** How many users the filter matches. */
export async function countUsers(durable: DurableStore, given: UserFilter): Promise<number> {
  const filter = searched(given);
  return matchesNoOne(filter) ? 0 : durable.users.countMatching(filter);
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
