/**
 * Refresh token families and their tokens (stored by hash only). Rotation is one statement
 * that only changes a current token, so two racing refreshes are serialised on the old token's
 * row on any instance; what did not rotate is classified under that row's lock, and a reuse
 * revokes the family in the same commit.
 */
import { sql, type Selectable } from 'kysely';
import type { IssuedAccess, RefreshFamilyRecord, RefreshTokenRepository, RefreshTokenState, RotateInput, RotateResult } from '../types.ts';
import type { Db, RefreshTokenFamiliesTable } from './database.ts';

function toFamily(row: Omit<Selectable<RefreshTokenFamiliesTable>, 'revoked_reason'>): RefreshFamilyRecord {
  return {
    id: row.id,
    clientId: row.client_id,
    userId: row.user_id,
    scopes: row.scopes,
    claims: (typeof row.claims === 'string' ? JSON.parse(row.claims) : row.claims) as RefreshFamilyRecord['claims'],
    allowedScopes: row.allowed_scopes,
    nonce: row.nonce,
    authTime: row.auth_time,
    amr: row.amr,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

/** Marks families revoked and returns the access tokens of theirs that are still live. */
async function revokeFamilies(db: Db, familyIds: string[], reason: string, now: Date): Promise<IssuedAccess[]> {
  if (familyIds.length === 0) return [];
  await db.updateTable('refresh_token_families')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', 'in', familyIds)
    .where('revoked_at', 'is', null)
    .execute();
  const rows = await db.selectFrom('refresh_tokens')
    .select(['access_jti', 'access_expires_at'])
    .where('family_id', 'in', familyIds)
    .where('access_expires_at', '>', now)
    .execute();
  return rows.map((r) => ({ jti: r.access_jti, expiresAt: r.access_expires_at }));
}

/**
 * The common case in one statement: the old token, still current, unexpired and of this
 * client's live family, is marked rotated and its successor inserted. Two racing statements
 * serialise on the old token's row; the second finds it rotated and changes nothing.
 */
async function rotateCurrent(db: Db, input: RotateInput, next: NonNullable<RotateInput['next']>): Promise<boolean> {
  const { rows } = await sql<{ family_id: string }>`
    WITH rotated AS (
      UPDATE refresh_tokens AS t
      SET rotated_at = ${input.now}, successor_hash = ${next.tokenHash}, successor_sealed = ${next.successorSealed}
      FROM refresh_token_families AS f
      WHERE t.token_hash = ${input.oldHash} AND t.rotated_at IS NULL AND t.expires_at > ${input.now}
        AND f.id = t.family_id AND f.client_id = ${input.clientId} AND f.revoked_at IS NULL AND f.expires_at > ${input.now}
      RETURNING t.family_id, f.expires_at AS family_expires_at
    )
    INSERT INTO refresh_tokens (token_hash, family_id, created_at, expires_at, access_jti, access_expires_at)
    -- Sliding idle expiry, never past the family's absolute end.
    SELECT ${next.tokenHash}, family_id, ${input.now}, LEAST(${next.expiresAt}::timestamptz, family_expires_at),
           ${next.access.jti}, ${next.access.expiresAt}
    FROM rotated
    RETURNING family_id`.execute(db);
  return rows.length === 1;
}

/**
 * Why a token was not rotated, under its row lock: a retry within the grace window, a reuse
 * (the family is revoked in the same commit), or simply not valid.
 */
function classifyNotRotated(db: Db, input: RotateInput): Promise<RotateResult> {
  return db.transaction().execute(async (trx): Promise<RotateResult> => {
    const row = await trx.selectFrom('refresh_tokens as t')
      .innerJoin('refresh_token_families as f', 'f.id', 't.family_id')
      .select(['t.family_id', 't.rotated_at', 't.successor_sealed', 'f.client_id', 'f.revoked_at'])
      .where('t.token_hash', '=', input.oldHash)
      .forUpdate('t')
      .executeTakeFirst();
    if (!row || row.client_id !== input.clientId || row.revoked_at !== null || row.rotated_at === null) return { outcome: 'invalid' };
    const sinceRotation = input.now.getTime() - row.rotated_at.getTime();
    if (sinceRotation <= input.graceSeconds * 1000 && row.successor_sealed) {
      return { outcome: 'grace', successorSealed: row.successor_sealed };
    }
    const revokedAccess = await revokeFamilies(trx, [row.family_id], 'refresh token reused', input.now);
    return { outcome: 'reused', familyId: row.family_id, rotatedAt: row.rotated_at, revokedAccess };
  });
}

export function sqlRefreshTokens(db: Db): RefreshTokenRepository {
  return {
    async createFamily(family, first) {
      // One statement (atomic on its own): the code exchange's only write to the database.
      await sql`
        WITH family AS (
          INSERT INTO refresh_token_families (id, client_id, user_id, scopes, claims, allowed_scopes, nonce, auth_time, amr, expires_at)
          VALUES (${family.id}, ${family.clientId}, ${family.userId}, ${family.scopes},
                  ${family.claims === null ? null : JSON.stringify(family.claims)}, ${family.allowedScopes},
                  ${family.nonce}, ${family.authTime}, ${family.amr}, ${family.expiresAt})
          RETURNING id, expires_at
        )
        INSERT INTO refresh_tokens (token_hash, family_id, created_at, expires_at, access_jti, access_expires_at)
        SELECT ${first.tokenHash}, id, ${first.createdAt}, LEAST(${first.expiresAt}::timestamptz, expires_at),
               ${first.access.jti}, ${first.access.expiresAt}
        FROM family`.execute(db);
    },

    async find(tokenHash): Promise<RefreshTokenState | undefined> {
      const row = await db.selectFrom('refresh_tokens as t')
        .innerJoin('refresh_token_families as f', 'f.id', 't.family_id')
        .select(['f.id', 'f.client_id', 'f.user_id', 'f.scopes', 'f.claims', 'f.allowed_scopes', 'f.nonce', 'f.auth_time', 'f.amr', 'f.expires_at', 'f.created_at', 'f.revoked_at'])
        .select(['t.created_at as token_created_at', 't.expires_at as token_expires_at', 't.rotated_at as token_rotated_at'])
        .where('t.token_hash', '=', tokenHash)
        .executeTakeFirst();
      if (!row) return undefined;
      const { token_created_at: createdAt, token_expires_at: expiresAt, token_rotated_at: rotatedAt, ...family } = row;
      return { tokenHash, family: toFamily(family), createdAt, expiresAt, rotatedAt };
    },

    async rotate(input) {
      if (input.next && await rotateCurrent(db, input, input.next)) return { outcome: 'rotated' };
      return classifyNotRotated(db, input);
    },

    revokeFamily: (familyId, reason, now) => db.transaction().execute((trx) => revokeFamilies(trx, [familyId], reason, now)),

    revokeForUserAndClient: (userId, clientId, reason, now) =>
      db.transaction().execute(async (trx) => {
        const families = await trx.selectFrom('refresh_token_families').select('id')
          .where('user_id', '=', userId).where('client_id', '=', clientId).where('revoked_at', 'is', null)
          .execute();
        return revokeFamilies(trx, families.map((f) => f.id), reason, now);
      }),
  };
}

