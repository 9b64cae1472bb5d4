/**
 * The administration console is a built-in application whose client id is `idp-admin-console`
 * (src/store/records.ts CONSOLE_CLIENT_ID): no row of `clients` may take it, whatever writes it
 * (SQL, the API, the command line, a seed file), so nothing can pose as the console or change
 * how it signs in. NOT VALID: a row written before this rule is left for its administrator (it
 * is never served: the built-in client answers for that id), and adding the rule reads no rows.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE clients ADD CONSTRAINT clients_client_id_not_reserved
    CHECK (client_id <> 'idp-admin-console') NOT VALID`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE clients DROP CONSTRAINT clients_client_id_not_reserved`.execute(db);
}
