/**
 * A client's previous secret, kept during a secret rotation (`idp clients rotate-secret ID
 * --keep-old-for DURATION`) so that the client can switch without downtime: until
 * `previous_secret_expires_at`, the token endpoint accepts it beside `secret_hash`. Both columns
 * are set or neither, and only a confidential client holds one. The row trigger on `clients`
 * notifies every instance of a change to them, as of any other column.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE clients
      ADD COLUMN previous_secret_hash text
        CONSTRAINT clients_previous_secret_hash_format
          CHECK (previous_secret_hash ~ '^sha256\\$[A-Za-z0-9_-]{22}\\$[A-Za-z0-9_-]{43}$'),
      ADD COLUMN previous_secret_expires_at timestamptz,
      ADD CONSTRAINT clients_previous_secret_complete
        CHECK ((previous_secret_hash IS NULL) = (previous_secret_expires_at IS NULL)),
      ADD CONSTRAINT clients_previous_secret_confidential
        CHECK (previous_secret_hash IS NULL OR secret_hash IS NOT NULL)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE clients
      DROP CONSTRAINT clients_previous_secret_confidential,
      DROP CONSTRAINT clients_previous_secret_complete,
      DROP COLUMN previous_secret_expires_at,
      DROP COLUMN previous_secret_hash`.execute(db);
}
