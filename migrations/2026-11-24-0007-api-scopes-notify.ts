/**
 * API scopes are served from memory (src/store/clients-cache.ts): every instance drops its copy
 * of the list when a row changes, whoever changed it (`idp scopes`, a seed file, or SQL), so a
 * removed scope stops being granted at once.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION idp_notify_api_scopes_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('idp_changes', 'api_scopes');
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER api_scopes_notify_change AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_scopes
    FOR EACH STATEMENT EXECUTE FUNCTION idp_notify_api_scopes_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER api_scopes_notify_change ON api_scopes`.execute(db);
  await sql`DROP FUNCTION idp_notify_api_scopes_change()`.execute(db);
}
