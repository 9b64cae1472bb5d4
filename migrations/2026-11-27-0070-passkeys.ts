/**
 * Passkeys (WebAuthn credentials) as rows of `user_factors` (kind 'passkey'): the credential id
 * (unique: an authenticator answers with it, and it names one user's one passkey), the public key
 * (COSE, base64url), the signature counter, the transports, the backup flags and the AAGUID.
 * The counter and the backup state change at each sign-in and are not announced: the trigger of
 * 2026-11-27-0002 compares only what a cached user decides on.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE user_factors
      ADD COLUMN credential_id text,
      ADD COLUMN public_key text,
      ADD COLUMN sign_count bigint CONSTRAINT user_factors_sign_count CHECK (sign_count BETWEEN 0 AND 4294967295),
      ADD COLUMN transports text[] NOT NULL DEFAULT '{}',
      ADD COLUMN backup_eligible boolean NOT NULL DEFAULT false,
      ADD COLUMN backed_up boolean NOT NULL DEFAULT false,
      ADD COLUMN aaguid text,
      ADD CONSTRAINT user_factors_passkey_credential CHECK (
        kind <> 'passkey' OR (credential_id IS NOT NULL AND public_key IS NOT NULL AND sign_count IS NOT NULL))`.execute(db);
  await sql`CREATE UNIQUE INDEX user_factors_credential_id ON user_factors (credential_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DELETE FROM user_factors WHERE kind = 'passkey'`.execute(db);
  await sql`
    ALTER TABLE user_factors
      DROP CONSTRAINT user_factors_passkey_credential,
      DROP COLUMN credential_id, DROP COLUMN public_key, DROP COLUMN sign_count, DROP COLUMN transports,
      DROP COLUMN backup_eligible, DROP COLUMN backed_up, DROP COLUMN aaguid`.execute(db);
}
