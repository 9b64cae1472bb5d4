/**
 * Users are served from memory by id (src/store/users-cache.ts): every instance drops its
 * copy when a row changes, whoever changed it (the service, `idp users`, or SQL).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION idp_notify_user_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('idp_changes', 'users');
      ELSE
        -- An insert needs no notice: only rows that exist are cached.
        PERFORM pg_notify('idp_changes', 'user:' || OLD.id);
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER users_notify_change AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION idp_notify_user_change()`.execute(db);
  await sql`
    CREATE TRIGGER users_notify_truncate AFTER TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION idp_notify_user_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER users_notify_truncate ON users`.execute(db);
  await sql`DROP TRIGGER users_notify_change ON users`.execute(db);
  await sql`DROP FUNCTION idp_notify_user_change()`.execute(db);
}
