/**
 * Refresh token families, one row each, counting generations (migration
 * 2026-11-22-0003-refresh-generations). A rotation is one UPDATE of that row by its primary
 * key that only moves a live family still at the presented generation, so two racing
 * rotations serialise on the row on any instance and one of them wins. No column it sets is
 * indexed, so it stays a heap-only update.
 */
import { sql, type Selectable } from 'kysely';
import type { RefreshFamilyState, RefreshTokenRepository, RevokedFamilies } from '../types.ts';
import type { Db, RefreshTokenFamiliesTable } from './database.ts';

/** Every column by name (not `*`): the lookup is then a prepared statement (see database.ts). */
const FAMILY_COLUMNS = [
  'id', 'client_id', 'user_id', 'scopes', 'claims', 'allowed_scopes', 'nonce', 'auth_time', 'amr', 'expires_at', 'created_at',
  'revoked_at', 'generation', 'token_salt', 'rotated_at', 'earlier_rotations', 'token_expires_at', 'access_expires_at',
] as const;

/** How many rotations before the latest are kept (those within the grace window, at most this many). */
const EARLIER_ROTATIONS_KEPT = 4;

function toFamily(row: Pick<Selectable<RefreshTokenFamiliesTable>, (typeof FAMILY_COLUMNS)[number]>): RefreshFamilyState {
  return {
    id: row.id,
    clientId: row.client_id,
    userId: row.user_id,
    scopes: row.scopes,
    claims: (typeof row.claims === 'string' ? JSON.parse(row.claims) : row.claims) as RefreshFamilyState['claims'],
    allowedScopes: row.allowed_scopes,
    nonce: row.nonce,
    authTime: row.auth_time,
    amr: row.amr,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    generation: row.generation,
    tokenSalt: Buffer.from(row.token_salt),
    rotatedAt: row.rotated_at,
    earlierRotations: row.earlier_rotations.map((at) => new Date(at)),
    tokenExpiresAt: row.token_expires_at,
    accessExpiresAt: row.access_expires_at,
  };
}

/** Marks live families revoked; returns those this call revoked, with what their revocation must cover. */
async function revokeFamilies(db: Db, familyIds: string[], reason: string, now: Date): Promise<RevokedFamilies> {
  if (familyIds.length === 0) return { families: [], legacyAccess: [] };
  const revoked = await db.updateTable('refresh_token_families')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', 'in', familyIds)
    .where('revoked_at', 'is', null)
    .returning(['id', 'access_expires_at'])
    .execute();
  if (revoked.length === 0) return { families: [], legacyAccess: [] };
  // Access tokens of a family from before generations carry no family claim: revoked one by one.
  const legacy = await db.selectFrom('refresh_tokens')
    .select(['access_jti', 'access_expires_at'])
    .where('family_id', 'in', revoked.map((f) => f.id))
    .where('access_expires_at', '>', now)
    .execute();
  return {
    families: revoked.map((f) => ({ id: f.id, accessExpiresAt: f.access_expires_at })),
    legacyAccess: legacy.map((r) => ({ jti: r.access_jti, expiresAt: r.access_expires_at })),
  };
}

export function sqlRefreshTokens(db: Db): RefreshTokenRepository {
  return {
    async createFamily(family) {
      await db.insertInto('refresh_token_families').values({
        id: family.id,
        client_id: family.clientId,
        user_id: family.userId,
        scopes: family.scopes,
        claims: family.claims === null ? null : JSON.stringify(family.claims),
        allowed_scopes: family.allowedScopes,
        nonce: family.nonce,
        auth_time: family.authTime,
        amr: family.amr,
        expires_at: family.expiresAt,
        token_salt: family.tokenSalt,
        // Sliding idle expiry, never past the family's absolute end.
        token_expires_at: family.tokenExpiresAt < family.expiresAt ? family.tokenExpiresAt : family.expiresAt,
        access_expires_at: family.accessExpiresAt,
      }).execute();
    },

    async get(familyId) {
      const row = await db.selectFrom('refresh_token_families').select(FAMILY_COLUMNS).where('id', '=', familyId).executeTakeFirst();
      return row ? toFamily(row) : undefined;
    },

    async findLegacy(tokenHash) {
      const row = await db.selectFrom('refresh_tokens').select(['family_id', 'rotated_at']).where('token_hash', '=', tokenHash).executeTakeFirst();
      return row ? { familyId: row.family_id, current: row.rotated_at === null } : undefined;
    },

    async advance(input) {
      const { rows } = await sql<{ id: string }>`
        UPDATE refresh_token_families
        SET generation = generation + 1, rotated_at = ${input.issuedAt},
            earlier_rotations = (ARRAY(
              SELECT at FROM unnest(array_prepend(rotated_at, earlier_rotations)) WITH ORDINALITY AS r(at, n)
              WHERE at >= ${input.graceSince} ORDER BY n))[1:${sql.lit(EARLIER_ROTATIONS_KEPT)}],
            token_expires_at = LEAST(${input.tokenExpiresAt}::timestamptz, expires_at),
            access_expires_at = GREATEST(${input.accessExpiresAt}::timestamptz, access_expires_at)
        WHERE id = ${input.familyId} AND client_id = ${input.clientId} AND generation = ${input.from}
          AND revoked_at IS NULL AND expires_at > ${input.now} AND token_expires_at > ${input.now}
        RETURNING id`.execute(db);
      return rows.length === 1;
    },

    revokeFamily: (familyId, reason, now) => db.transaction().execute((trx) => revokeFamilies(trx, [familyId], reason, now)),

    async purgeEnded(now, limit) {
      // SKIP LOCKED: instances purging at once share the work instead of waiting on each other.
      const { rows } = await sql<{ id: string }>`
        DELETE FROM refresh_token_families
        WHERE id IN (
          SELECT id FROM refresh_token_families
          WHERE expires_at <= ${now} AND access_expires_at <= ${now}
          LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING id`.execute(db);
      return rows.length;
    },

    revokeForUserAndClient: (userId, clientId, reason, now) =>
      db.transaction().execute(async (trx) => {
        const families = await trx.selectFrom('refresh_token_families').select('id')
          .where('user_id', '=', userId).where('client_id', '=', clientId).where('revoked_at', 'is', null)
          .execute();
        return revokeFamilies(trx, families.map((f) => f.id), reason, now);
      }),
  };
}
