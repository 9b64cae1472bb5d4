/** The `users` table <-> UserRecord. */
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { SignInSourceKind, UserInput, UserRecord } from '../records.ts';
import type { UpsertResult, UserRepository } from '../types.ts';
import { factorsOfUser, toFactorRecord } from './factors.ts';
import { PLANNED_EACH_TIME } from './connection.ts';
import type { Db, UsersTable } from './tables.ts';
import { after, allOf, exactConditions, NAME_KEY, searchBranches, startsWithAny } from './user-search.ts';

type UserRow = Selectable<UsersTable> & { factors: Parameters<typeof toFactorRecord>[0][] };

function toRecord(row: UserRow): UserRecord {
  return {
    id: row.id,
    source: row.source as SignInSourceKind,
    subject: row.subject,
    username: row.username,
    passwordHash: row.password_hash,
    givenName: row.given_name,
    familyName: row.family_name,
    name: row.name,
    email: row.email,
    emailVerified: row.email_verified,
    phoneNumber: row.phone_number,
    phoneNumberVerified: row.phone_number_verified,
    roles: row.roles,
    factors: row.factors.map(toFactorRecord),
    locked: row.locked,
    mustChangePassword: row.must_change_password,
    mustEnrolMfa: row.must_enrol_mfa,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

type UserColumns = Omit<UsersTable, 'id' | 'source' | 'created_at' | 'updated_at' | 'version'>;

function toColumns(change: Partial<Omit<UserInput, 'id' | 'source'>>): Partial<UserColumns> {
  const map: Record<string, keyof UserColumns> = {
    subject: 'subject', username: 'username', passwordHash: 'password_hash', givenName: 'given_name',
    familyName: 'family_name', name: 'name', email: 'email', emailVerified: 'email_verified',
    phoneNumber: 'phone_number', phoneNumberVerified: 'phone_number_verified', roles: 'roles',
    locked: 'locked', mustChangePassword: 'must_change_password',
    mustEnrolMfa: 'must_enrol_mfa',
  };
  const columns: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(change)) {
    const column = map[key];
    if (column && value !== undefined) columns[column] = value;
  }
  return columns as Partial<UserColumns>;
}

/** Every column by name (not `*`): the lookups are then prepared statements (see postgres.ts). */
const ALL_COLUMNS = [
  'id', 'source', 'subject', 'username', 'password_hash', 'given_name', 'family_name', 'name', 'email',
  'email_verified', 'phone_number', 'phone_number_verified', 'roles', 'locked',
  'must_change_password', 'must_enrol_mfa', 'created_at', 'updated_at', 'version',
] as const satisfies ReadonlyArray<keyof UsersTable>;

export function sqlUsers(db: Db): UserRepository {
  const selectUsers = () => db.selectFrom('users').select(ALL_COLUMNS).select(factorsOfUser);
  const byUsername = (source: SignInSourceKind, username: string) =>
    selectUsers()
      .where('source', '=', source)
      .where(sql<string>`lower(username)`, '=', username.toLowerCase());

  const countWhere = async (where: RawBuilder<boolean>) => {
    const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<string>().as('n')).where(where).executeTakeFirstOrThrow();
    return Number(row.n);
  };

  return {
    async getById(id) {
      const row = await selectUsers().where('id', '=', id).executeTakeFirst();
      return row ? toRecord(row) : undefined;
    },
    async getVersioned(id) {
      const row = await selectUsers().where('id', '=', id).executeTakeFirst();
      return row ? { record: toRecord(row), version: Number(row.version) } : undefined;
    },
    async getByUsername(source, username) {
      const row = await byUsername(source, username).executeTakeFirst();
      return row ? toRecord(row) : undefined;
    },
    async getBySubject(source, subject) {
      const row = await selectUsers().where('source', '=', source).where('subject', '=', subject).executeTakeFirst();
      return row ? toRecord(row) : undefined;
    },
    async findByEmail(source, email) {
      const rows = await selectUsers()
        .where('source', '=', source)
        .where(sql<string>`lower(email)`, '=', email.toLowerCase())
        .limit(2)
        .execute();
      return rows.map(toRecord);
    },
    async list() {
      const rows = await selectUsers().orderBy('source').orderBy('username').execute();
      return rows.map(toRecord);
    },
    async getManyByUsername(source, usernames) {
      if (usernames.length === 0) return [];
      // One array parameter: a list of hundreds of parameters costs more to plan than to run.
      const lowered = usernames.map((u) => u.toLowerCase());
      const rows = await selectUsers().where('source', '=', source).where(sql<boolean>`lower(username) = any(${lowered}::text[])`).execute();
      return rows.map(toRecord);
    },
    async insertMany(users) {
      if (users.length === 0) return;
      await db.insertInto('users').values(users.map(({ id, source, ...rest }) => ({ id, source, ...(toColumns(rest) as UserColumns) }))).execute();
    },
    async upsert(user): Promise<UpsertResult> {
      const existing = await byUsername(user.source, user.username).executeTakeFirst();
      const { id, source, ...rest } = user;
      if (!existing) {
        await db.insertInto('users').values({ id, source, ...(toColumns(rest) as UserColumns) }).execute();
        return 'created';
      }
      // Local users keep their id as subject; the caller's fresh id is not used for an existing row.
      const columns = toColumns(source === 'local' ? { ...rest, subject: existing.subject } : rest);
      const changed = Object.entries(columns).some(([k, v]) => !sameValue(existing[k as keyof typeof existing], v));
      if (!changed) return 'unchanged';
      await db.updateTable('users').set({ ...columns, updated_at: sql`now()` }).where('id', '=', existing.id).execute();
      return 'updated';
    },
    async insert(user) {
      const { id, source, ...rest } = user;
      // Any unique violation (the id, or the name in another spelling) is a conflict: no row.
      const row = await db.insertInto('users').values({ id, source, ...(toColumns(rest) as UserColumns) })
        .onConflict((oc) => oc.doNothing()).returning(ALL_COLUMNS).returning(factorsOfUser).executeTakeFirst();
      return row && { record: toRecord(row), version: Number(row.version) };
    },
    async update(id, change, ifVersion) {
      return (await this.change(id, change, ifVersion)) !== undefined;
    },
    async change(id, change, ifVersion) {
      const columns = toColumns(change);
      let query = db.updateTable('users').set({ ...columns, updated_at: sql`now()` }).where('id', '=', id);
      if (ifVersion !== undefined) query = query.where('version', '=', ifVersion);
      const row = await query.returning(ALL_COLUMNS).returning(factorsOfUser).executeTakeFirst();
      return row && { record: toRecord(row), version: Number(row.version) };
    },
    async remove(id, ifVersion) {
      let query = db.deleteFrom('users').where('id', '=', id);
      if (ifVersion !== undefined) query = query.where('version', '=', ifVersion);
      const result = await query.executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async page(request) {
      const exact = exactConditions(request);
      const place = request.after;
      const where = request.q === undefined
        ? allOf([...exact, ...(place === undefined ? [] : [after(place)])])
        : sql<boolean>`id IN ${searchBranches(request.q, exact, place, request.limit)} ${sql.raw(PLANNED_EACH_TIME)}`;
      const rows = await selectUsers().select(NAME_KEY.as('place_name')).where(where).orderBy(NAME_KEY).orderBy('id').limit(request.limit).execute();
      return rows.map((row) => ({ user: toRecord(row), place: { name: row.place_name, id: row.id } }));
    },
    async count() {
      return countWhere(allOf([]));
    },
    async countMatching(filter) {
      return countWhere(allOf([...exactConditions(filter), ...(filter.q === undefined ? [] : [startsWithAny(filter.q)])]));
    },
    async locked(limit) {
      const [rows, count] = await Promise.all([
        selectUsers().where('locked', '=', true).orderBy(NAME_KEY).orderBy('id').limit(limit).execute(),
        countWhere(sql<boolean>`locked`),
      ]);
      return { users: rows.map(toRecord), count };
    },
  };
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => v === b[i]);
  return (a ?? null) === (b ?? null);
}
