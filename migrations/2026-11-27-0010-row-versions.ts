/**
 * Row versions for the administration API's ETags: `version` on `clients`, `users` and
 * `api_scopes` takes a new value from one sequence on every INSERT and UPDATE, whoever writes
 * (the API, `idp`, a seed file or SQL), so a stale `If-Match` is noticed whatever changed the row.
 * One sequence for all tables: a row removed and added again under its old name never repeats
 * a version an old ETag carries. A change of a user's second factors (not a mere use of one)
 * moves the user's version too, as it changes what the API shows of the user.
 */
import { sql, type Kysely } from 'kysely';

const TABLES = ['clients', 'users', 'api_scopes'] as const;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE SEQUENCE idp_row_versions`.execute(db);
  for (const table of TABLES) {
    await sql`ALTER TABLE ${sql.table(table)} ADD COLUMN version bigint NOT NULL DEFAULT nextval('idp_row_versions')`.execute(db);
  }
  await sql`
    CREATE FUNCTION idp_next_row_version() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      NEW.version := nextval('idp_row_versions');
      RETURN NEW;
    END
    $$`.execute(db);
  for (const table of TABLES) {
    await sql`
      CREATE TRIGGER ${sql.id(`${table}_next_version`)} BEFORE UPDATE ON ${sql.table(table)}
      FOR EACH ROW EXECUTE FUNCTION idp_next_row_version()`.execute(db);
  }
  await sql`
    CREATE FUNCTION idp_user_version_on_factor_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE users SET version = version WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.user_id ELSE NEW.user_id END;
      RETURN NULL;
    END
    $$`.execute(db);
  // last_used_at is written at every sign-in with a factor: a use is no change of the user.
  await sql`
    CREATE TRIGGER user_factors_user_version AFTER INSERT OR DELETE OR UPDATE OF kind, name, secret_sealed ON user_factors
    FOR EACH ROW EXECUTE FUNCTION idp_user_version_on_factor_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER user_factors_user_version ON user_factors`.execute(db);
  await sql`DROP FUNCTION idp_user_version_on_factor_change()`.execute(db);
  for (const table of TABLES) {
    await sql`DROP TRIGGER ${sql.id(`${table}_next_version`)} ON ${sql.table(table)}`.execute(db);
    await sql`ALTER TABLE ${sql.table(table)} DROP COLUMN version`.execute(db);
  }
  await sql`DROP FUNCTION idp_next_row_version()`.execute(db);
  await sql`DROP SEQUENCE idp_row_versions`.execute(db);
}
