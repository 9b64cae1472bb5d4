/**
 * Second factors as rows of their own (`user_factors`), so that a user may hold several kinds
 * (an authenticator app now; recovery codes and passkeys later) and the sign-in asks which a
 * user has. Every sealed TOTP secret of `users` moves into a 'totp' row (sealed as it was, for
 * `totp:<user id>`), then the column goes. A change of a user's factors is announced as a change
 * of the user, so every instance drops its cached copy as it does for an edit of `users`.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE user_factors (
      id text PRIMARY KEY DEFAULT gen_random_uuid()::text,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      kind text NOT NULL CONSTRAINT user_factors_kind CHECK (kind IN ('totp', 'recovery_code', 'passkey')),
      name text NOT NULL CONSTRAINT user_factors_name_length CHECK (char_length(name) BETWEEN 1 AND 100),
      secret_sealed text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      CONSTRAINT user_factors_totp_secret CHECK (kind <> 'totp' OR secret_sealed IS NOT NULL)
    )`.execute(db);
  await sql`CREATE INDEX user_factors_user_id ON user_factors (user_id)`.execute(db);
  // One authenticator app per user: the sign-in checks a code against one secret.
  await sql`CREATE UNIQUE INDEX user_factors_one_totp ON user_factors (user_id) WHERE kind = 'totp'`.execute(db);
  await sql`
    INSERT INTO user_factors (user_id, kind, name, secret_sealed)
    SELECT id, 'totp', 'Authenticator app', totp_secret_sealed FROM users WHERE totp_secret_sealed IS NOT NULL`.execute(db);
  await sql`ALTER TABLE users DROP COLUMN totp_secret_sealed`.execute(db);
  await sql`
    CREATE FUNCTION idp_notify_user_factor_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('idp_changes', 'users');
        RETURN NULL;
      END IF;
      -- A sign-in recording when a factor was last used changes nothing a cached user decides on.
      IF TG_OP = 'UPDATE' AND (OLD.user_id, OLD.kind, OLD.name, OLD.secret_sealed, OLD.created_at)
          IS NOT DISTINCT FROM (NEW.user_id, NEW.kind, NEW.name, NEW.secret_sealed, NEW.created_at) THEN
        RETURN NULL;
      END IF;
      IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('idp_changes', 'user:' || OLD.user_id);
      END IF;
      IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.user_id <> OLD.user_id) THEN
        PERFORM pg_notify('idp_changes', 'user:' || NEW.user_id);
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER user_factors_notify_change AFTER INSERT OR UPDATE OR DELETE ON user_factors
    FOR EACH ROW EXECUTE FUNCTION idp_notify_user_factor_change()`.execute(db);
  await sql`
    CREATE TRIGGER user_factors_notify_truncate AFTER TRUNCATE ON user_factors
    FOR EACH STATEMENT EXECUTE FUNCTION idp_notify_user_factor_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE users ADD COLUMN totp_secret_sealed text`.execute(db);
  await sql`
    UPDATE users SET totp_secret_sealed = f.secret_sealed
    FROM user_factors f WHERE f.user_id = users.id AND f.kind = 'totp'`.execute(db);
  await sql`DROP TABLE user_factors`.execute(db);
  await sql`DROP FUNCTION idp_notify_user_factor_change()`.execute(db);
}
