/**
 * A refresh token family becomes one row that counts generations. A refresh token names its
 * family and generation and carries a MAC over both and the family's salt (src/tokens/
 * refresh-tokens.ts), so a rotation changes one row in place (no row per token, nothing that
 * grows with every refresh), any earlier generation is still recognised as reuse, and a retry
 * within the grace window is answered by signing the same claims again (RS256 signatures are
 * deterministic) instead of storing the response.
 *
 * Tokens issued before this migration stay valid: they are found by hash in refresh_tokens
 * (which keeps only those), as generation 0 of their family.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE refresh_token_families
      ADD COLUMN generation integer NOT NULL DEFAULT 0 CONSTRAINT refresh_token_families_generation_positive CHECK (generation >= 0),
      -- Random, per family: a MAC needs it and the key derived from IDP_SECRET, so neither the
      -- database nor the secret alone can make a token.
      ADD COLUMN token_salt bytea,
      -- When the current generation was issued by a rotation (null: generation 0, the code exchange).
      ADD COLUMN rotated_at timestamptz,
      -- When the generations before it were issued, newest first, as far as the grace window
      -- reached at the last rotation (at most 4): a token rotated out within the window gets its
      -- successor again.
      ADD COLUMN earlier_rotations timestamptz[] NOT NULL DEFAULT '{}',
      -- Idle expiry of the current generation, never past expires_at.
      ADD COLUMN token_expires_at timestamptz,
      -- Expiry of the latest access token issued from the family: how long its revocation must last.
      ADD COLUMN access_expires_at timestamptz`.execute(db);
  // gen_random_uuid() is the randomness every PostgreSQL 13+ (and PGlite) has without an extension.
  await sql`
    UPDATE refresh_token_families AS f
    SET token_salt = decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'),
        token_expires_at = COALESCE(t.current_expires_at, now()),
        access_expires_at = COALESCE(t.access_expires_at, now())
    FROM (
      SELECT family_id,
             max(expires_at) FILTER (WHERE rotated_at IS NULL) AS current_expires_at,
             max(access_expires_at) AS access_expires_at
      FROM refresh_tokens GROUP BY family_id
    ) AS t
    WHERE t.family_id = f.id`.execute(db);
  await sql`
    UPDATE refresh_token_families
    SET token_salt = decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'),
        token_expires_at = now(), access_expires_at = now()
    WHERE token_salt IS NULL`.execute(db);
  await sql`
    ALTER TABLE refresh_token_families
      ALTER COLUMN token_salt SET NOT NULL,
      ALTER COLUMN token_expires_at SET NOT NULL,
      ALTER COLUMN access_expires_at SET NOT NULL`.execute(db);
  // Families past their end are deleted in batches (src/main.ts): found by this index. A
  // rotation never changes expires_at, so the index leaves rotations heap-only.
  await sql`CREATE INDEX refresh_token_families_expires_at ON refresh_token_families (expires_at)`.execute(db);
  // Room on each page for the next version of a row: a rotation is then a heap-only update
  // (no index changes: none of the columns it sets is indexed).
  await sql`ALTER TABLE refresh_token_families SET (fillfactor = 80)`.execute(db);
  // The grace responses of old rotations are not needed any more (retries are re-signed).
  await sql`ALTER TABLE refresh_tokens DROP COLUMN successor_sealed, DROP COLUMN successor_hash`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE refresh_tokens ADD COLUMN successor_hash text, ADD COLUMN successor_sealed text`.execute(db);
  await sql`DROP INDEX refresh_token_families_expires_at`.execute(db);
  await sql`ALTER TABLE refresh_token_families RESET (fillfactor)`.execute(db);
  await sql`
    ALTER TABLE refresh_token_families
      DROP COLUMN generation, DROP COLUMN token_salt, DROP COLUMN rotated_at, DROP COLUMN earlier_rotations,
      DROP COLUMN token_expires_at, DROP COLUMN access_expires_at`.execute(db);
}
