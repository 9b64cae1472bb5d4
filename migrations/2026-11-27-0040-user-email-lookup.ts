/**
 * "Forgot password" finds a local account by its email address as well as by its name: an
 * index on the lower-cased address keeps that lookup as quick when the address matches no one
 * as when it matches (the answer and its time must not tell who has an account).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX users_email_lookup ON users (source, lower(email)) WHERE email IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX users_email_lookup`.execute(db);
}
