/**
 * The rules of users as decision tables, on a store in memory: whoever changes a rule has a test
 * that runs in milliseconds. A new local account from its fields, a change of one (the API's
 * PATCH, `idp users update`, a seed file's entry), a flag set or cleared, a removal, and what
 * each records: one `admin_change` naming the changed fields, none for a refusal or a change that
 * changes nothing, and the end of the user's tokens where the rules (a new password) or the
 * database (locked, flagged, removed) end them.
 *
 * Two rules live in the database and the memory store does what it does (the PGlite and
 * PostgreSQL store tests, test/store/durable-contract.ts, check the SQL): the unique index on
 * (source, lower(username)), which refuses a username another account has, and the triggers that
 * end a user's tokens when the user is locked, flagged or removed.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AdminError } from '../../../src/admin/errors.ts';
import type { ChangeActor } from '../../../src/admin/recorded-change.ts';
import { USER_FIELDS } from '../../../src/admin/input-schemas.ts';
import { updateUser, type UserPatch } from '../../../src/admin/user-update.ts';
import { createUser, findUser, removeUser, setUserFlag, type NewLocalUser } from '../../../src/admin/users.ts';
import type { AuditEvent } from '../../../src/events/audit-events.ts';
import { ARGON2_PARAMS, needsRehash, verifyPassword } from '../../../src/sources/passwords.ts';
import type { UserFlag, UserRecord } from '../../../src/store/records.ts';
import { memoryStore } from './memory-store.ts';

/** A stored hash with the service's own parameters (never verified: no rule here signs in with it). */
const SERVICE_HASH = `$argon2id$v=19$m=${ARGON2_PARAMS.memoryCost},t=${ARGON2_PARAMS.timeCost},p=${ARGON2_PARAMS.parallelism}$${randomBytes(16).toString('base64').replace(/=+$/, '')}$${randomBytes(32).toString('base64').replace(/=+$/, '')}`;
/** A hash made elsewhere (an import's), with parameters not the service's. */
const IMPORTED_HASH = `$argon2id$v=19$m=65536,t=3,p=4$${randomBytes(16).toString('base64').replace(/=+$/, '')}$${randomBytes(32).toString('base64').replace(/=+$/, '')}`;

const PASSWORD = 'correct horse battery staple';

function setup() {
  const durable = memoryStore();
  const logged: AuditEvent[] = [];
  const actor: ChangeActor = { by: { actor: 'api', client_id: 'automation' }, logged: (event) => logged.push(event) };
  const deps = { durable, clock: () => Date.parse('2026-11-29T00:00:00Z'), secret: randomBytes(32) };
  return { deps, actor, logged, durable };
}

type Setup = ReturnType<typeof setup>;

const newUser = (extra: Partial<NewLocalUser> = {}): NewLocalUser => ({
  username: 'nina', passwordHash: SERVICE_HASH, givenName: 'Nina', familyName: 'Berg', email: 'nina@example.com', emailVerified: true,
  phoneNumber: null, phoneNumberVerified: false, roles: [], ...extra,
});

/** A local account made by the rules themselves, its creation's event left out of `logged`. */
async function existing(s: Setup, extra: Partial<NewLocalUser> = {}): Promise<UserRecord> {
  const { user } = await createUser(s.deps, newUser(extra), s.actor);
  s.logged.length = 0;
  return user.record;
}

/** An account of another source, as sign-in through a directory leaves it (no password here). */
async function ldapUser(s: Setup): Promise<UserRecord> {
  const row = await s.durable.users.insert({
    id: 'ldap-1', source: 'ldap', subject: 'uid=lars,ou=people,dc=example,dc=com', username: 'Lars', passwordHash: null, givenName: null, familyName: null,
    name: null, email: null, emailVerified: false, phoneNumber: null, phoneNumberVerified: false, roles: [], locked: false, mustChangePassword: false, mustEnrolMfa: false,
  });
  if (!row) throw new Error('the directory user was not inserted');
  return row.record;
}

async function refused(promise: Promise<unknown>): Promise<AdminError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof AdminError)) throw new Error(`not refused: ${String(error)}`);
  return error;
}

const changeEvents = (logged: readonly AuditEvent[]) => logged.map((event) => ({ ...event }));

describe('a new local account', () => {
  it.each<[string, Partial<NewLocalUser>, Partial<UserRecord>]>([
    ['is stored under the canonical form of its name: trimmed, lower case', { username: ' Nina ' }, { username: 'nina' }],
    ['is stored under the compatibility form of a fullwidth name (NFKC)', { username: 'ｎｉｎａ' }, { username: 'nina' }],
    ['takes its full name from both parts', {}, { name: 'Nina Berg' }],
    ['takes its full name from the one part there is', { familyName: null }, { name: 'Nina' }],
    ['has no full name without parts', { givenName: null, familyName: null }, { name: null }],
    ['keeps a role once', { roles: ['admin', 'admin', 'support'] }, { roles: ['admin', 'support'] }],
    ['is enabled and asked for nothing', {}, { locked: false, mustChangePassword: false, mustEnrolMfa: false, source: 'local' }],
    ['keeps a hash made elsewhere as given', { passwordHash: IMPORTED_HASH }, { passwordHash: IMPORTED_HASH }],
  ])('%s', async (_, extra, expected) => {
    const s = setup();
    const { user } = await createUser(s.deps, newUser(extra), s.actor);
    expect(user.record).toMatchObject(expected);
    // The local `sub` is the account's id, and stays whatever the name becomes.
    expect(user.record.subject).toBe(user.record.id);
    expect(changeEvents(s.logged)).toStrictEqual([{ type: 'admin_change', actor: 'api', client_id: 'automation', action: 'create', resource: 'user', resource_id: user.record.id, fields: [...USER_FIELDS] }]);
    expect(s.durable.events.map((event) => event.type)).toStrictEqual(['admin_change']);
  });

  it('hashes a password given with the service\'s argon2id, never storing it', async () => {
    const s = setup();
    const { user } = await createUser(s.deps, newUser({ passwordHash: undefined, password: PASSWORD }), s.actor);
    expect(user.record.passwordHash).toMatch(/^\$argon2id\$/)
    expect(await verifyPassword(user.record.passwordHash ?? '', PASSWORD)).toBe(true);
  });

  it.each<[string, Partial<NewLocalUser>, string, readonly (string | number)[]]>([
    ['an empty username', { username: '  ' }, 'user "  ": username must not be empty', ['username']],
    ['a username with a character that shows as nothing', { username: 'nina\u200b' }, 'user "nina\u200b": username must not contain characters that show as nothing (such as a zero-width space or joiner, or a soft hyphen)', ['username']],
    ['a username with a line break', { username: 'nina\nadmin' }, 'user "nina\\x0aadmin": username must not contain control characters (such as ESC or a line break) or bidirectional overrides', ['username']],
    ['a given name with ESC', { givenName: 'Nina\u001b[31m' }, 'user "nina": given_name must not contain control characters (such as ESC or a line break) or bidirectional overrides', ['given_name']],
    ['an email with a display name', { email: 'Nina <nina@example.com>' }, 'user "nina": email must be a bare email address such as nina@example.com, without a display name, brackets or spaces', ['email']],
    ['an empty role', { roles: ['admin', ''] }, 'user "nina": roles[1] must not be empty', ['roles', 1]],
    ['neither a password nor a hash', { passwordHash: undefined }, 'password of nina refused: required for a new user (or password_hash)', ['password']],
    ['both a password and a hash', { password: PASSWORD }, 'password_hash of nina refused: give password or password_hash, not both', ['password_hash']],
    ['a short password', { passwordHash: undefined, password: 'short one' }, 'password of nina refused: Use at least 12 characters.', ['password']],
    ['a password holding the username', { passwordHash: undefined, password: 'my name is NINA, ok' }, 'password of nina refused: Do not use your username in your password.', ['password']],
    ['a password of one character repeated', { passwordHash: undefined, password: 'zzzzzzzzzzzzzz' }, 'password of nina refused: This password is too common. Choose another one.', ['password']],
    ['a password from the breach lists', { passwordHash: undefined, password: 'password1234' }, 'password of nina refused: This password is too common. Choose another one.', ['password']],
    ['a hash of no known kind', { passwordHash: '$md5$abc' }, 'password_hash of nina refused:', ['password_hash']],
  ])('refuses %s, naming the field, writing nothing', async (_, extra, message, path) => {
    const s = setup();
    const error = await refused(createUser(s.deps, newUser(extra), s.actor));
    expect(error.code).toBe('invalid');
    expect(error.message.startsWith(message), error.message).toBe(true);
    expect(error.problems[0]?.path).toStrictEqual(path);
    expect(await s.durable.users.count()).toBe(0);
    expect(s.logged).toStrictEqual([]);
    expect(s.durable.events).toStrictEqual([]);
  });

  it.each<[string, string]>([
    ['the same name', 'nina'],
    ['another case', 'NINA'],
    ['surrounding spaces', ' nina\u00a0'],
    ['fullwidth letters', 'Ｎｉｎａ'],
  ])('is a conflict beside an account of %s, naming the name as typed', async (_, typed) => {
    const s = setup();
    await existing(s);
    const error = await refused(createUser(s.deps, newUser({ username: typed }), s.actor));
    expect(error).toMatchObject({ code: 'conflict', message: `user ${typed} already exists` });
    expect(await s.durable.users.count()).toBe(1);
    expect(s.logged).toStrictEqual([]);
  });

  it('of one name made at once by several callers: one account, the others conflicts, one event', async () => {
    const s = setup();
    const results = await Promise.allSettled(['nina', 'Nina', ' NINA'].map((username) => createUser(s.deps, newUser({ username }), s.actor)));
    expect(results.map((r) => (r.status === 'fulfilled' ? 'created' : (r.reason as AdminError).code)).sort()).toStrictEqual(['conflict', 'conflict', 'created']);
    expect(s.logged).toHaveLength(1);
  });

  it('may share an email address with another account, in any case: email is no key (sign-in by email finds both and takes neither)', async () => {
    const s = setup();
    await existing(s);
    const { user } = await createUser(s.deps, newUser({ username: 'nora', email: 'NINA@Example.com' }), s.actor);
    expect(user.record.email).toBe('NINA@Example.com');
    expect((await s.durable.users.findByEmail('local', 'nina@example.com')).map((u) => u.username).sort()).toStrictEqual(['nina', 'nora']);
  });

  it('is found by any spelling of its name, as sign-in finds it', async () => {
    const s = setup();
    const user = await existing(s);
    for (const typed of ['NINA', ' nina ', 'ｎｉｎａ']) expect((await findUser(s.durable, typed, ['local'])).id).toBe(user.id);
    expect(await refused(findUser(s.durable, 'nora', ['local']))).toMatchObject({ code: 'not_found', message: 'no user named nora' });
  });
});

describe('a change of an account', () => {
  it.each<[string, Partial<NewLocalUser>, UserPatch, string[], Partial<UserRecord>]>([
    ['a given name the full name followed: the full name follows', {}, { given_name: 'Nora' }, ['given_name', 'name'], { givenName: 'Nora', name: 'Nora Berg' }],
    ['a family name cleared: the full name is the given name', {}, { family_name: null }, ['family_name', 'name'], { familyName: null, name: 'Nina' }],
    ['both parts cleared: no full name', {}, { given_name: null, family_name: null }, ['given_name', 'family_name', 'name'], { name: null }],
    ['a part of an account without a full name: the name is made', { givenName: null, familyName: null }, { given_name: 'Nina' }, ['given_name', 'name'], { name: 'Nina' }],
    ['a given name when the full name was set apart: the full name stays', {}, { name: 'Dr. N. Berg' }, ['name'], { name: 'Dr. N. Berg' }],
    ['a given name and a full name in one change: the full name given wins', {}, { given_name: 'Nora', name: 'N. Berg' }, ['given_name', 'name'], { givenName: 'Nora', name: 'N. Berg' }],
    ['a new username: stored canonical, the sub stays', {}, { username: ' Nora ' }, ['username'], { username: 'nora' }],
    ['a new email: no longer verified', {}, { email: 'nina@example.org' }, ['email', 'email_verified'], { email: 'nina@example.org', emailVerified: false }],
    ['a new email vouched for in the same change: verified', {}, { email: 'nina@example.org', email_verified: true }, ['email'], { email: 'nina@example.org', emailVerified: true }],
    ['an email cleared', {}, { email: null }, ['email', 'email_verified'], { email: null, emailVerified: false }],
    ['a phone number', {}, { phone_number: '+49 30 1234567', phone_number_verified: true }, ['phone_number', 'phone_number_verified'], { phoneNumber: '+49 30 1234567', phoneNumberVerified: true }],
    ['roles', {}, { roles: ['support', 'admin'] }, ['roles'], { roles: ['support', 'admin'] }],
    ['roles cleared with null', { roles: ['admin'] }, { roles: null }, ['roles'], { roles: [] }],
    ['locked', {}, { locked: true }, ['locked'], { locked: true }],
    ['must change the password', {}, { must_change_password: true }, ['must_change_password'], { mustChangePassword: true }],
    ['must enrol a second factor', {}, { must_enrol_mfa: true }, ['must_enrol_mfa'], { mustEnrolMfa: true }],
    ['a hash made elsewhere over one not the service\'s', { passwordHash: IMPORTED_HASH }, { password_hash: SERVICE_HASH.replace('m=19456', 'm=65536') }, ['password'], { passwordHash: SERVICE_HASH.replace('m=19456', 'm=65536') }],
  ])('%s', async (_, given, patch, changed, expected) => {
    const s = setup();
    const user = await existing(s, given);
    const result = await updateUser(s.deps, user, patch, s.actor);
    expect(result.kind).toBe('updated');
    expect(result.changed).toStrictEqual(changed);
    expect(result.user.record).toMatchObject({ ...expected, id: user.id, subject: user.subject });
    expect(await s.durable.users.getVersioned(user.id)).toStrictEqual(result.user);
    expect(changeEvents(s.logged)).toStrictEqual([{ type: 'admin_change', actor: 'api', client_id: 'automation', action: 'update', resource: 'user', resource_id: user.subject, fields: changed }]);
  });

  it.each<[string, Partial<NewLocalUser>, UserPatch]>([
    ['an empty patch', {}, {}],
    ['the values stored', {}, { given_name: 'Nina', family_name: 'Berg', email: 'nina@example.com', roles: [], locked: false }],
    ['another spelling of the stored username', {}, { username: 'NINA ' }],
    ['a second factor removed that the user does not have', {}, { totp_secret: null }],
    ['an imported hash over the service\'s own (the user has set a password here since)', {}, { password_hash: IMPORTED_HASH }],
    ['parts that stay when the full name was set apart', {}, { given_name: 'Nina' }],
  ])('changes nothing for %s: no write, no event', async (_, given, patch) => {
    const s = setup();
    const user = await existing(s, given);
    const before = await s.durable.users.getVersioned(user.id);
    const result = await updateUser(s.deps, user, patch, s.actor);
    expect(result).toMatchObject({ kind: 'unchanged', changed: [] });
    expect(await s.durable.users.getVersioned(user.id)).toStrictEqual(before);
    expect(s.logged).toStrictEqual([]);
    expect(s.durable.userRevocations).toStrictEqual([]);
  });

  it.each<[string, UserPatch, string, string]>([
    ['an empty username', { username: '' }, 'invalid', 'user "nina": username must not be empty'],
    ['a username with a soft hyphen', { username: 'ni\u00adna' }, 'invalid', 'user "nina": username must not contain characters that show as nothing'],
    ['a family name with a bidirectional override', { family_name: 'Berg\u202e' }, 'invalid', 'user "nina": family_name must not contain control characters'],
    ['an email without a domain', { email: 'nina@' }, 'invalid', 'user "nina": email must be a bare email address'],
    ['a short password', { password: 'too short' }, 'invalid', 'password of nina refused: Use at least 12 characters.'],
    ['a password holding the username', { password: 'ninaninanina1' }, 'invalid', 'password of nina refused: Do not use your username in your password.'],
    ['a hash of no known kind', { password_hash: 'plain text' }, 'invalid', 'password_hash of nina refused:'],
    // The unique index on (source, lower(username)): a rule of the database (see the top of this file).
    ['the username of another account', { username: 'nora' }, 'conflict', 'user nora already exists'],
    ['another spelling of another account\'s username', { username: ' NORA' }, 'conflict', 'user nora already exists'],
  ])('refuses %s, changing nothing', async (_, patch, code, message) => {
    const s = setup();
    const user = await existing(s);
    await existing(s, { username: 'nora' });
    const before = await s.durable.users.getVersioned(user.id);
    const error = await refused(updateUser(s.deps, user, patch, s.actor));
    expect(error.code).toBe(code);
    expect(error.message.startsWith(message), error.message).toBe(true);
    expect(await s.durable.users.getVersioned(user.id)).toStrictEqual(before);
    expect(s.logged).toStrictEqual([]);
    expect(s.durable.events.filter((event) => event.type === 'admin_change')).toHaveLength(2);
  });

  it.each<[string, UserPatch, string]>([
    ['a password', { password: PASSWORD }, 'user "Lars" signs in through ldap: it has no password here'],
    ['a password hash', { password_hash: IMPORTED_HASH }, 'user "Lars" signs in through ldap: it has no password here'],
    ['a username', { username: 'lars' }, 'user "Lars" signs in through ldap: its username is the directory\'s'],
  ])('refuses %s for an account of a directory', async (_, patch, message) => {
    const s = setup();
    const user = await ldapUser(s);
    expect(await refused(updateUser(s.deps, user, patch, s.actor))).toMatchObject({ code: 'invalid', message });
  });

  it('at a version: made at the version read; refused as stale at another, as gone once removed', async () => {
    const s = setup();
    const user = await existing(s);
    const read = await s.durable.users.getVersioned(user.id);
    const first = await updateUser(s.deps, user, { given_name: 'Nora' }, s.actor, { ifVersion: read?.version });
    expect(first.kind).toBe('updated');
    expect(await refused(updateUser(s.deps, user, { given_name: 'Nell' }, s.actor, { ifVersion: read?.version }))).toMatchObject({ code: 'stale' });
    await removeUser(s.deps, user, s.actor);
    expect(await refused(updateUser(s.deps, user, { given_name: 'Nell' }, s.actor, { ifVersion: first.user.version }))).toMatchObject({ code: 'not_found', message: `user ${user.subject} does not exist` });
  });
});

describe('a new password', () => {
  it('is hashed anew and ends the user\'s tokens, in the change\'s transaction', async () => {
    const s = setup();
    const user = await existing(s);
    const result = await updateUser(s.deps, user, { password: PASSWORD }, s.actor);
    expect(result.changed).toStrictEqual(['password']);
    expect(await verifyPassword(result.user.record.passwordHash ?? '', PASSWORD)).toBe(true);
    expect(s.durable.userRevocations).toStrictEqual([{ userId: user.id, reason: 'password changed' }]);
  });

  it.each<[string, boolean, string[]]>([
    // A seed file applied again repeats the password: nothing changes, nobody is signed out.
    ['repeated by a seed file: kept', false, []],
    // The API and `idp users update --password`: set as asked, and the user's tokens end.
    ['set explicitly: a new hash', true, ['password']],
  ])('the current one %s', async (_, explicit, changed) => {
    const s = setup();
    const user = (await updateUser(s.deps, await existing(s), { password: PASSWORD }, s.actor)).user.record;
    const revoked = s.durable.userRevocations.length;
    const result = await updateUser(s.deps, user, { password: PASSWORD }, s.actor, { explicit });
    expect(result.changed).toStrictEqual(changed);
    expect(result.user.record.passwordHash === user.passwordHash).toBe(changed.length === 0);
    expect(s.durable.userRevocations.length - revoked).toBe(changed.length);
  });

  it('is one the policy allows, whoever sets it', async () => {
    const s = setup();
    const user = await existing(s);
    expect(await refused(updateUser(s.deps, user, { password: 'qwertyuiop123' }, s.actor, { explicit: true }))).toMatchObject({ code: 'invalid', problems: [{ path: ['password'] }] });
    expect(s.durable.userRevocations).toStrictEqual([]);
  });

  it('made here is today\'s argon2id; one made elsewhere is moved to it at the next sign-in', () => {
    expect(needsRehash(SERVICE_HASH)).toBe(false);
    expect(needsRehash(IMPORTED_HASH)).toBe(true);
  });
});

describe('flags', () => {
  it.each<[string, UserFlag, boolean, Partial<UserRecord>, string, string | undefined]>([
    // The trigger users_revoke_tokens_on_flag: a rule of the database (see the top of this file).
    ['locking ends the user\'s tokens', 'locked', true, {}, 'locked', 'user locked'],
    ['unlocking ends nothing', 'locked', false, { locked: true }, 'locked', undefined],
    ['asking for a new password ends the user\'s tokens', 'mustChangePassword', true, {}, 'must_change_password', 'password change required'],
    ['no longer asking for one ends nothing', 'mustChangePassword', false, { mustChangePassword: true }, 'must_change_password', undefined],
    ['asking for a second factor ends the user\'s tokens', 'mustEnrolMfa', true, {}, 'must_enrol_mfa', 'second factor required'],
    ['no longer asking for one ends nothing', 'mustEnrolMfa', false, { mustEnrolMfa: true }, 'must_enrol_mfa', undefined],
  ])('%s', async (_, flag, value, before, field, revocation) => {
    const s = setup();
    const created = await existing(s);
    const user = Object.keys(before).length === 0 ? created : (await s.durable.users.change(created.id, before))?.record;
    if (!user) throw new Error('no user');
    const earlier = s.durable.userRevocations.length;
    const result = await setUserFlag(s.deps, user, flag, value, s.actor);
    expect(result.user.record[flag]).toBe(value);
    expect(changeEvents(s.logged)).toStrictEqual([{ type: 'admin_change', actor: 'api', client_id: 'automation', action: 'update', resource: 'user', resource_id: user.subject, fields: [field] }]);
    expect(s.durable.userRevocations.slice(earlier)).toStrictEqual(revocation ? [{ userId: user.id, reason: revocation }] : []);
  });

  it('of an account removed meanwhile: not found, no event', async () => {
    const s = setup();
    const user = await existing(s);
    await s.durable.users.remove(user.id);
    expect(await refused(setUserFlag(s.deps, user, 'locked', true, s.actor))).toMatchObject({ code: 'not_found', message: 'no user named nina' });
    expect(s.logged).toStrictEqual([]);
  });
});

describe('removing an account', () => {
  it('deletes it and ends its tokens (the delete trigger), one event; its name is free again', async () => {
    const s = setup();
    const user = await existing(s);
    expect(await removeUser(s.deps, user, s.actor)).toMatchObject({ kind: 'removed' });
    expect(await s.durable.users.getById(user.id)).toBeUndefined();
    expect(s.durable.userRevocations).toStrictEqual([{ userId: user.id, reason: 'user removed' }]);
    expect(changeEvents(s.logged)).toStrictEqual([{ type: 'admin_change', actor: 'api', client_id: 'automation', action: 'delete', resource: 'user', resource_id: user.subject, fields: [] }]);
    expect((await createUser(s.deps, newUser(), s.actor)).user.record.id).not.toBe(user.id);
  });

  it.each<[string, (version: number) => number | undefined, string, string]>([
    ['gone already', () => undefined, 'not_found', 'no user named nina'],
    ['gone already, at a version', (version) => version, 'not_found', 'does not exist'],
  ])('refuses an account %s', async (_, at, code, message) => {
    const s = setup();
    const user = await existing(s);
    const version = (await s.durable.users.getVersioned(user.id))?.version ?? 0;
    await s.durable.users.remove(user.id);
    const error = await refused(removeUser(s.deps, user, s.actor, at(version)));
    expect(error.code).toBe(code);
    expect(error.message).toContain(message);
    expect(s.logged).toStrictEqual([]);
  });

  it('at a version another change has moved on: stale, the account stays', async () => {
    const s = setup();
    const user = await existing(s);
    const version = (await s.durable.users.getVersioned(user.id))?.version ?? 0;
    await updateUser(s.deps, user, { given_name: 'Nora' }, s.actor);
    expect(await refused(removeUser(s.deps, user, s.actor, version))).toMatchObject({ code: 'stale' });
    expect(await s.durable.users.getById(user.id)).toBeDefined();
  });
});
