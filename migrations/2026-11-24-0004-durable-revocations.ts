/**
 * Revocations become durable. The `revocations` table of the initial migration (unused until
 * now) holds every revoked access token by `jti`, and every revoked refresh token family as
 * `family:<id>` (the key its access tokens are checked under, src/tokens/revocation.ts), until
 * the tokens would have expired. Each instance keeps a copy in memory: a new row is announced
 * on `idp_changes` as `revoked:<expiry in epoch seconds>:<key>`, and an instance that starts (or
 * lost its LISTEN connection) rebuilds its copy from the table. Redis may lose its data; this
 * table is the record.
 *
 * A user locked, removed, or newly required to change their password or enrol a second factor
 * loses every refresh token family and every access token issued to them, whoever makes the
 * change (the service, `idp users`, `idp seed`, or SQL): the triggers below do it in the same
 * transaction. A password change is revoked by the service itself (a password hash also
 * changes when it is moved to today's parameters at sign-in, which must not sign anyone out).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // A family's revocation names no single client: the column was never written.
  await sql`ALTER TABLE revocations DROP COLUMN client_id`.execute(db);
  // A NOTIFY payload is at most 8000 bytes: keys are UUIDs or family:<UUID>.
  await sql`ALTER TABLE revocations ADD CONSTRAINT revocations_jti_length CHECK (length(jti) BETWEEN 1 AND 200)`.execute(db);

  await sql`
    CREATE FUNCTION idp_notify_revocation() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('idp_changes', 'revoked:' || floor(extract(epoch FROM NEW.expires_at))::bigint || ':' || NEW.jti);
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER revocations_notify AFTER INSERT ON revocations
    FOR EACH ROW EXECUTE FUNCTION idp_notify_revocation()`.execute(db);

  // Every family of the user revoked, and what their revocation must cover recorded: each
  // family's key, the access tokens of families from before generations (they carry no family
  // claim), and the access tokens issued without a refresh token. Returns what it recorded.
  await sql`
    CREATE FUNCTION idp_revoke_user_tokens(target_user text, revoke_reason text, revoke_at timestamptz)
    RETURNS TABLE (revoked_key text, revoked_until timestamptz)
    LANGUAGE sql AS $$
      WITH families AS (
        UPDATE refresh_token_families SET revoked_at = revoke_at, revoked_reason = revoke_reason
        WHERE user_id = target_user AND revoked_at IS NULL
        RETURNING id, access_expires_at
      ), own AS (
        DELETE FROM issued_access_tokens WHERE user_id = target_user RETURNING jti, expires_at
      ), covered AS (
        SELECT 'family:' || id AS jti, access_expires_at AS expires_at FROM families
        UNION ALL
        SELECT t.access_jti, t.access_expires_at FROM refresh_tokens AS t WHERE t.family_id IN (SELECT id FROM families)
        UNION ALL
        SELECT jti, expires_at FROM own
      )
      INSERT INTO revocations AS r (jti, expires_at, revoked_at)
      SELECT DISTINCT ON (jti) jti, expires_at, revoke_at FROM covered WHERE expires_at > revoke_at
      ON CONFLICT (jti) DO NOTHING
      RETURNING r.jti, r.expires_at
    $$`.execute(db);

  await sql`
    CREATE FUNCTION idp_revoke_on_user_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        -- Before the row goes: deleting it cascades to the families this must still find.
        PERFORM idp_revoke_user_tokens(OLD.id, 'user removed', now());
        RETURN OLD;
      END IF;
      PERFORM idp_revoke_user_tokens(NEW.id, CASE
        WHEN NEW.locked AND NOT OLD.locked THEN 'user locked'
        WHEN NEW.must_change_password AND NOT OLD.must_change_password THEN 'password change required'
        ELSE 'second factor required' END, now());
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER users_revoke_tokens_on_delete BEFORE DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION idp_revoke_on_user_change()`.execute(db);
  await sql`
    CREATE TRIGGER users_revoke_tokens_on_flag AFTER UPDATE OF locked, must_change_password, must_enrol_mfa ON users
    FOR EACH ROW
    WHEN ((NEW.locked AND NOT OLD.locked) OR (NEW.must_change_password AND NOT OLD.must_change_password)
          OR (NEW.must_enrol_mfa AND NOT OLD.must_enrol_mfa))
    EXECUTE FUNCTION idp_revoke_on_user_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER users_revoke_tokens_on_flag ON users`.execute(db);
  await sql`DROP TRIGGER users_revoke_tokens_on_delete ON users`.execute(db);
  await sql`DROP FUNCTION idp_revoke_on_user_change()`.execute(db);
  await sql`DROP FUNCTION idp_revoke_user_tokens(text, text, timestamptz)`.execute(db);
  await sql`DROP TRIGGER revocations_notify ON revocations`.execute(db);
  await sql`DROP FUNCTION idp_notify_revocation()`.execute(db);
  await sql`ALTER TABLE revocations DROP CONSTRAINT revocations_jti_length`.execute(db);
  await sql`ALTER TABLE revocations ADD COLUMN client_id text NOT NULL DEFAULT ''`.execute(db);
}
