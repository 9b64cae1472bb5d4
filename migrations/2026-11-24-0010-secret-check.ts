/**
 * The check value of the master secret: a known text sealed under IDP_SECRET when the database
 * is first used. A start with a secret that opens it not (nor does any of IDP_SECRET_PREVIOUS)
 * stops at once, naming IDP_SECRET, instead of failing later at every use of a sealed value.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE secret_check (
      id smallint PRIMARY KEY DEFAULT 1 CONSTRAINT secret_check_one_row CHECK (id = 1),
      sealed text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE secret_check`.execute(db);
}
