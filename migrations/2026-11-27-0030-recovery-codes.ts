/**
 * Recovery codes as rows of `user_factors` (kind 'recovery_code'), each holding the keyed hash of
 * its code: a code is found, and used up, by one statement that deletes its row, so that it works
 * once on any instance however many browsers send it at once. The hash is unique per user (two
 * codes of one set never collide in practice: the index makes it a rule), and every recovery code
 * has one. Rows of that kind without a hash could never be typed: none were ever written.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE user_factors ADD COLUMN secret_hash text`.execute(db);
  await sql`DELETE FROM user_factors WHERE kind = 'recovery_code'`.execute(db);
  await sql`
    ALTER TABLE user_factors ADD CONSTRAINT user_factors_recovery_code_hash
    CHECK ((kind = 'recovery_code') = (secret_hash IS NOT NULL))`.execute(db);
  await sql`CREATE UNIQUE INDEX user_factors_secret_hash ON user_factors (user_id, secret_hash) WHERE secret_hash IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX user_factors_secret_hash`.execute(db);
  await sql`ALTER TABLE user_factors DROP CONSTRAINT user_factors_recovery_code_hash`.execute(db);
  await sql`ALTER TABLE user_factors DROP COLUMN secret_hash`.execute(db);
}
