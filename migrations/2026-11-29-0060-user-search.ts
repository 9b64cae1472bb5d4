/**
 * The administration API lists users by username (case aside) a page at a time, and finds them
 * by the start of their username, email, given or family name, or by their exact email. Each of
 * these reads is served by an index, so a page costs the same at any depth of any number of users:
 *
 * - `users_username_order`: the order of the list and its keyset cursor, (lower(username), id),
 *   which also serves an exact username and the start of one;
 * - one index per other searched field, on its lower-cased value.
 *
 * The keys are in the "C" collation (byte order): a prefix is then a plain range of the index
 * (`>= 'ali' AND < 'ali' || U+10FFFF`) in any database locale, which a parameter can bound, and
 * the same expression on PostgreSQL and PGlite.
 */
import { sql, type Kysely } from 'kysely';

const SEARCHED = ['email', 'given_name', 'family_name'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX users_username_order ON users ((lower(username) COLLATE "C"), id)`.execute(db);
  for (const column of SEARCHED) {
    await sql`CREATE INDEX ${sql.id(`users_${column}_prefix`)} ON users ((lower(${sql.ref(column)}) COLLATE "C"))`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of SEARCHED) await sql`DROP INDEX ${sql.id(`users_${column}_prefix`)}`.execute(db);
  await sql`DROP INDEX users_username_order`.execute(db);
}
