/**
 * Changing some fields of an account: `idp users update`, a seed file's entry for a user that
 * exists, and later the administration API's PATCH. One rule for all of them: a field the patch
 * leaves out keeps its stored value, `null` clears it (roles to `[]`), a value sets it. A new
 * password ends the user's tokens (src/admin/passwords.ts), in the transaction of the change.
 */
import type { Clock } from '../clock.ts';
import type { Audit } from '../events/record.ts';
import type { AccountChange } from '../factors/account-change.ts';
import { hashPassword, needsRehash, verifyPassword } from '../sources/passwords.ts';
import { TOTP_FACTOR_NAME } from '../factors/authenticator-app.ts';
import { totpFactor, type UserInput, type UserRecord, type Versioned } from '../store/records.ts';
import type { DurableStore } from '../store/types.ts';
import { deriveKey } from '../tokens/secret-box.ts';
import { AdminError, refuseOtherVersion, staleOrGone } from './errors.ts';
import { nameAfter } from './full-name.ts';
import { kept, keptList, sameValue } from './patch.ts';
import { canonicalUsername } from './rules.ts';
import { revokeAfterPasswordChange } from './passwords.ts';
import { recordedChange, type ChangeActor, type ChangeDeps } from './recorded-change.ts';
import { seedTotpSecret, type SeedTotp } from './seed-records.ts';
import { profileProblems, quoted, refusePassword, refusePasswordOrHash, refuseProfileProblems } from './user-fields.ts';

/** The fields to change, by their wire names (OpenID Connect claims). */
export interface UserPatch {
  /** A local account's new username (stored in the canonical form); the `sub` stays. */
  username?: string | undefined;
  password?: string | undefined;
  /** A hash made elsewhere (a seed file's, an import's): see newPasswordHash. */
  password_hash?: string | undefined;
  given_name?: string | null | undefined;
  family_name?: string | null | undefined;
  name?: string | null | undefined;
  email?: string | null | undefined;
  email_verified?: boolean | undefined;
  phone_number?: string | null | undefined;
  phone_number_verified?: boolean | undefined;
  roles?: readonly string[] | null | undefined;
  /** Base32; null removes the second factor. */
  totp_secret?: string | null | undefined;
  locked?: boolean | undefined;
  must_change_password?: boolean | undefined;
  must_enrol_mfa?: boolean | undefined;
}

type Column = keyof Omit<UserInput, 'id' | 'source' | 'subject'>;

const WIRE_NAMES: Record<Column, string> = {
  username: 'username', passwordHash: 'password', givenName: 'given_name', familyName: 'family_name', name: 'name', email: 'email',
  emailVerified: 'email_verified', phoneNumber: 'phone_number', phoneNumberVerified: 'phone_number_verified', roles: 'roles',
  locked: 'locked', mustChangePassword: 'must_change_password', mustEnrolMfa: 'must_enrol_mfa',
};

/** The wire names in the order a change names them; the TOTP factor is a row of its own. */
const FIELD_ORDER = Object.values(WIRE_NAMES).flatMap((name) => (name === 'roles' ? [name, 'totp_secret'] : [name]));

/** What a patch does to one user, prepared outside any transaction (argon2 runs here). */
export interface UserChange {
  user: UserRecord;
  columns: Partial<Pick<UserInput, Column>>;
  /** The TOTP factor to write (src/admin/seed-records.ts decides it). */
  totp: SeedTotp;
  /** The wire names of the fields whose stored value changes. */
  changed: string[];
}

/**
 * The stored hash when a seed file repeats the password (applying a file again changes nothing);
 * a new hash, and so the end of the user's tokens, whenever a password is set explicitly.
 * An imported hash replaces the stored one, unless the stored one is already the service's own
 * argon2id: the user has signed in (or set a password) here since, and that password is the
 * current one. So importing the same file again changes nothing.
 */
function importedPasswordHash(user: UserRecord, hash: string): string | null {
  refusePasswordOrHash({ password_hash: hash }, user.username, false);
  return user.passwordHash !== null && !needsRehash(user.passwordHash) ? user.passwordHash : hash;
}

async function newPasswordHash(user: UserRecord, password: string | undefined, explicit: boolean, hash?: string): Promise<string | null> {
  if (password === undefined && hash === undefined) return user.passwordHash;
  if (user.source !== 'local') throw new AdminError('invalid', `user ${quoted(user.username)} signs in through ${user.source}: it has no password here`, [{ path: ['password'], message: 'not a local account' }]);
  if (password === undefined) return importedPasswordHash(user, hash ?? '');
  refusePassword(password, user.username);
  if (!explicit && user.passwordHash !== null && (await verifyPassword(user.passwordHash, password))) return user.passwordHash;
  return hashPassword(password);
}

/** A new address is not verified: only the administrator who says so in the same change vouches for it. */
function emailChanged(user: UserRecord, patch: UserPatch): boolean {
  return patch.email !== undefined && !sameValue(patch.email, user.email);
}

/** The username after the patch: a local account's in the canonical form; the others' are their directory's or provider's. */
function newUsername(user: UserRecord, typed: string | undefined): string {
  if (typed === undefined || typed === user.username) return user.username;
  if (user.source !== 'local') throw new AdminError('invalid', `user ${quoted(user.username)} signs in through ${user.source}: its username is the ${user.source === 'ldap' ? 'directory' : 'provider'}'s`, [{ path: ['username'], message: 'not a local account' }]);
  return canonicalUsername(typed);
}

/** `explicit`: a password given is set even when it is the current one (README "Administration API"). */
export async function prepareUserChange(user: UserRecord, patch: UserPatch, totpKey: Buffer, explicit = false): Promise<UserChange> {
  refuseProfileProblems(user.username, profileProblems({ ...patch, username: patch.username ?? user.username, roles: patch.roles ?? [] }));
  const parts = { givenName: kept(user.givenName, patch.given_name), familyName: kept(user.familyName, patch.family_name) };
  const after: Pick<UserInput, Column> = {
    username: newUsername(user, patch.username),
    passwordHash: await newPasswordHash(user, patch.password, explicit, patch.password_hash),
    ...parts,
    name: nameAfter(user, parts, patch.name),
    email: kept(user.email, patch.email),
    emailVerified: kept(emailChanged(user, patch) ? false : user.emailVerified, patch.email_verified),
    phoneNumber: kept(user.phoneNumber, patch.phone_number),
    phoneNumberVerified: kept(user.phoneNumberVerified, patch.phone_number_verified),
    roles: keptList(user.roles, patch.roles),
    locked: kept(user.locked, patch.locked),
    mustChangePassword: kept(user.mustChangePassword, patch.must_change_password),
    mustEnrolMfa: kept(user.mustEnrolMfa, patch.must_enrol_mfa),
  };
  const stored = totpFactor(user)?.secretSealed;
  const totp = seedTotpSecret(totpKey, user.id, patch.totp_secret, stored);
  const columns = (Object.keys(WIRE_NAMES) as Column[]).filter((key) => !sameValue(after[key], user[key]));
  // Removing a factor the user does not have changes nothing.
  const totpChanged = totp !== 'keep' && (totp !== null || stored !== undefined);
  const names = new Set([...columns.map((key) => WIRE_NAMES[key]), ...(totpChanged ? ['totp_secret'] : [])]);
  const changed = FIELD_ORDER.filter((name) => names.has(name));
  return { user, columns: Object.fromEntries(columns.map((key) => [key, after[key]])) as Partial<Pick<UserInput, Column>>, totp, changed };
}

/** Makes the user's 'totp' factor what the seed or patch decided (the one place that writes it). */
export async function writeTotp(tx: DurableStore, userId: string, totp: SeedTotp): Promise<void> {
  if (totp === 'keep') return;
  const stored = (await tx.factors.listForUser(userId)).filter((factor) => factor.kind === 'totp');
  for (const factor of stored) await tx.factors.remove(factor.id);
  if (totp !== null) await tx.factors.add({ userId, kind: 'totp', name: TOTP_FACTOR_NAME, secretSealed: totp });
}

/**
 * Writes a prepared change; a new password revokes the user's tokens in the same transaction.
 * With `ifVersion`, only to the user still at that version. Returns the user as stored.
 */
export async function writeUserChange(tx: DurableStore, change: UserChange, now: Date, ifVersion?: number): Promise<Versioned<UserRecord>> {
  // An unchanged user is not written (no instance is notified): read at its version.
  const written = change.changed.length === 0 ? await unchanged(tx, change.user.id, ifVersion) : await tx.users.change(change.user.id, change.columns, ifVersion);
  if (!written) {
    if (ifVersion === undefined) throw new AdminError('not_found', `no user named ${change.user.username}`);
    throw staleOrGone((await tx.users.getById(change.user.id)) !== undefined, `user ${change.user.subject}`);
  }
  if (change.changed.includes('password')) await revokeAfterPasswordChange((id, reason) => tx.revocations.revokeUser(id, reason, now), change.user.id);
  if (!change.changed.includes('totp_secret')) return written;
  await writeTotp(tx, change.user.id, change.totp);
  // The factor's trigger moved the user's version: the row as it is now, in this transaction.
  const stored = await tx.users.getVersioned(change.user.id);
  if (!stored) throw new AdminError('not_found', `no user named ${change.user.username}`);
  return stored;
}

async function unchanged(tx: DurableStore, id: string, ifVersion: number | undefined): Promise<Versioned<UserRecord> | undefined> {
  const stored = await tx.users.getVersioned(id);
  return stored && (ifVersion === undefined || stored.version === ifVersion) ? stored : undefined;
}

export interface UserUpdated {
  kind: 'updated' | 'unchanged';
  user: Versioned<UserRecord>;
  changed: string[];
}

/**
 * With `ifVersion` (the API's If-Match), the change is made only to the user at that version.
 * `explicit`: a password given is set (and the user's tokens end) even when it is the current one.
 */
export async function updateUser(deps: ChangeDeps & { secret: Buffer }, found: UserRecord, patch: UserPatch, actor: ChangeActor, options: { ifVersion?: number | undefined; explicit?: boolean } = {}): Promise<UserUpdated> {
  const { ifVersion, explicit = false } = options;
  let user = found;
  if (ifVersion !== undefined) {
    const current = await deps.durable.users.getVersioned(found.id);
    if (!current) throw staleOrGone(false, `user ${found.subject}`);
    refuseOtherVersion(current.version, ifVersion, `user ${found.subject}`);
    user = current.record;
  }
  // argon2 runs here, before the transaction.
  const change = await prepareUserChange(user, patch, deriveKey(deps.secret, 'totp-secrets'), explicit);
  // A new username another account has is refused by the unique index, as adding one is (409).
  return recordedChange(deps, actor, `user ${change.columns.username ?? user.username}`, async (tx) => {
    const stored = await writeUserChange(tx, change, new Date(deps.clock()), ifVersion);
    const result: UserUpdated = { kind: change.changed.length === 0 ? 'unchanged' : 'updated', user: stored, changed: change.changed };
    return { result, change: change.changed.length === 0 ? undefined : { action: 'update', resource: 'user', resource_id: user.subject, fields: change.changed } };
  });
}

/**
 * The user's own change of their profile (the account page): the same rule as the
 * administrator's, recorded as `profile_updated` (not an administrative change) in its transaction.
 */
export async function updateOwnProfile(deps: { change: AccountChange; clock: Clock; secret: Buffer }, user: UserRecord, patch: UserPatch, audit: Audit): Promise<UserUpdated> {
  const change = await prepareUserChange(user, patch, deriveKey(deps.secret, 'totp-secrets'));
  const stored = await deps.change(user.id, audit, async (tx) => ({
    result: await writeUserChange(tx, change, new Date(deps.clock())),
    events: change.changed.length === 0 ? [] : [{ type: 'profile_updated' as const, user_id: user.id, fields: change.changed }],
  }));
  return { kind: change.changed.length === 0 ? 'unchanged' : 'updated', user: stored, changed: change.changed };
}
