/**
 * Users: adding local accounts, finding, listing, flagging and removing accounts of any source.
 * A local username is stored in the canonical form sign-in looks it up by, so a second account
 * by another spelling of a name (`"ALICE "` beside `alice`) is a conflict, not a dead account.
 */
import { hashPassword } from '../sources/passwords.ts';
import type { SignInSourceKind, UserFlag, UserInput, UserRecord, Versioned } from '../store/records.ts';
import type { DurableStore, PageRequest, UserFilter, UserPlace } from '../store/types.ts';
import { randomToken } from '../tokens/opaque.ts';
import { fullName } from './full-name.ts';
import { AdminError, staleOrGone } from './errors.ts';
import { readPage, type Page } from './keyset.ts';
import { USER_FIELDS } from './input-schemas.ts';
import { recordedChange, type ChangeActor, type ChangeDeps } from './recorded-change.ts';
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

/** Adds a local account: an insert that fails on conflict (another spelling of the name included). */
export async function createUser(deps: ChangeDeps, input: NewLocalUser, actor: ChangeActor, fields: readonly string[] = USER_FIELDS): Promise<{ kind: 'created'; user: Versioned<UserRecord> }> {
  refuseProblems(input);
  const username = canonicalUsername(input.username);
  // Named as typed: the administrator recognises their own spelling.
  const subject = `user ${input.username}`;
  if (await deps.durable.users.getByUsername('local', username)) throw new AdminError('conflict', `${subject} already exists`);
  const passwordHash = input.passwordHash ?? (await hashPassword(input.password ?? ''));
  const id = randomToken(16);
  const { givenName, familyName } = input;
  const user: UserInput = {
    ...NEW_USER_DEFAULTS,
    id, source: 'local', subject: id, username, passwordHash, givenName, familyName,
    name: fullName({ givenName, familyName }),
    email: input.email, emailVerified: input.emailVerified,
    phoneNumber: input.phoneNumber, phoneNumberVerified: input.phoneNumberVerified,
    roles: [...new Set(input.roles)],
  };
  const created = await recordedChange(deps, actor, subject, async (tx) => {
    const row = await tx.users.insert(user);
    if (!row) throw new AdminError('conflict', `${subject} already exists`);
    return { result: row, change: { action: 'create', resource: 'user', resource_id: id, fields: [...fields] } };
  });
  return { kind: 'created', user: created };
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

const FLAG_NAMES: Record<UserFlag, string> = { locked: 'locked', mustChangePassword: 'must_change_password', mustEnrolMfa: 'must_enrol_mfa' };

/** Sets a flag (the database ends the user's tokens when one is set: migration 2026-11-24-0004). */
export async function setUserFlag(deps: ChangeDeps, user: UserRecord, flag: UserFlag, value: boolean, actor: ChangeActor): Promise<{ kind: 'updated'; user: Versioned<UserRecord> }> {
  return recordedChange(deps, actor, `user ${user.username}`, async (tx) => {
    const written = await tx.users.change(user.id, { [flag]: value });
    if (!written) throw new AdminError('not_found', `no user named ${user.username}`);
    return { result: { kind: 'updated', user: written }, change: { action: 'update', resource: 'user', resource_id: user.subject, fields: [FLAG_NAMES[flag]] } };
  });
}

/**
 * Deleting the row also deletes the user's consents and refresh token families (ON DELETE
 * CASCADE); the database first records their tokens as revoked (as it does when a user is
 * locked or flagged: migration 2026-11-24-0004), and every running instance hears of it.
 */
export async function removeUser(deps: ChangeDeps, user: UserRecord, actor: ChangeActor, ifVersion?: number): Promise<{ kind: 'removed'; user: UserRecord }> {
  return recordedChange(deps, actor, `user ${user.username}`, async (tx) => {
    if (await tx.users.remove(user.id, ifVersion)) return { result: { kind: 'removed', user }, change: { action: 'delete', resource: 'user', resource_id: user.subject, fields: [] } };
    if (ifVersion === undefined) throw new AdminError('not_found', `no user named ${user.username}`);
    throw staleOrGone((await tx.users.getById(user.id)) !== undefined, `user ${user.subject}`);
  });
}
