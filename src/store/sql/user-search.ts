/**
 * The conditions of the users list (UserRepository.page and countMatching), each served by an
 * index of migration 2026-11-29-0060: the username order and its keyset cursor, an exact username
 * or email, and the start of the username, email, given or family name. Keys are lower-cased by
 * the database and compared in the "C" collation (byte order), as the indexes hold them, so a
 * prefix is a range of an index: from the prefix up to the prefix followed by U+10FFFF, the last
 * code point (a value continuing with U+10FFFF itself, a noncharacter, is not found).
 */
import { sql, type RawBuilder } from 'kysely';
import type { UserFilter, UserPlace } from '../types.ts';

const SEARCHED = ['username', 'email', 'given_name', 'family_name'] as const;
type Searched = (typeof SEARCHED)[number];

/** A column's key as its index holds it. */
const keyOf = (column: Searched) => sql<string>`lower(${sql.ref(column)}) COLLATE "C"`;
/** The username order: what users_username_order holds, then the id. */
export const NAME_KEY = keyOf('username');
const lowered = (value: string) => sql<string>`lower(${value}::text)`;
/** The end of the range of the values that start with `prefix`. */
const endOf = (prefix: string) => sql<string>`lower(${prefix}::text) || chr(1114111)`;

type Condition = RawBuilder<boolean>;
export const allOf = (conditions: readonly Condition[]): Condition => (conditions.length === 0 ? sql<boolean>`true` : sql<boolean>`${sql.join(conditions, sql` AND `)}`);

/** The exact filters (username, email); `q` is the search's, made by searchBranches or startsWithAny. */
export function exactConditions(filter: UserFilter): Condition[] {
  return [
    ...(filter.username === undefined ? [] : [sql<boolean>`${NAME_KEY} = ${lowered(filter.username)}`]),
    ...(filter.email === undefined ? [] : [sql<boolean>`${keyOf('email')} = ${lowered(filter.email)}`]),
  ];
}

/** After a place in the username order: where the next page starts. */
export const after = (place: UserPlace): Condition => sql<boolean>`(${NAME_KEY}, id) > (${place.name}::text, ${place.id}::text)`;

const startsWith = (column: Searched, prefix: string): Condition =>
  sql<boolean>`${keyOf(column)} >= ${lowered(prefix)} AND ${keyOf(column)} < ${endOf(prefix)}`;

/** Any searched field starts with `q` (for counting: the database joins the four indexes' matches). */
export const startsWithAny = (q: string): Condition => sql<boolean>`(${sql.join(SEARCHED.map((column) => sql`(${startsWith(column, q)})`), sql` OR `)})`;

/**
 * The username's range from the later of the prefix and the cursor: one bound, so that the
 * index scan starts there (given apart, PostgreSQL may start the scan at the earlier one).
 */
function usernameFrom(q: string, place: UserPlace | undefined): Condition {
  if (place === undefined) return startsWith('username', q);
  const name = sql<string>`${place.name}::text COLLATE "C"`;
  return sql<boolean>`(${NAME_KEY}, id) > (greatest(${name}, ${lowered(q)}), CASE WHEN ${name} >= ${lowered(q)} THEN ${place.id}::text ELSE '' END)
    AND ${NAME_KEY} < ${endOf(q)}`;
}

/**
 * The ids of the first `limit` users in username order after `place` that `q` finds, and the
 * exact filters keep: one branch per searched field, each the first `limit` of its own matches
 * in that order (walking the username index, or reading the field's index and sorting its few
 * matches, whichever the database finds cheaper for this `q`), joined.
 */
export function searchBranches(q: string, exact: readonly Condition[], place: UserPlace | undefined, limit: number): RawBuilder<unknown> {
  const cursor = place === undefined ? [] : [after(place)];
  const branch = (column: Searched) => {
    const where = column === 'username' ? [usernameFrom(q, place), ...exact] : [startsWith(column, q), ...cursor, ...exact];
    return sql`(SELECT id FROM users WHERE ${allOf(where)} ORDER BY ${NAME_KEY}, id LIMIT ${limit})`;
  };
  return sql`(${sql.join(SEARCHED.map(branch), sql` UNION ALL `)})`;
}
