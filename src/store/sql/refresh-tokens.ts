/**
 * Refresh token families and their tokens (stored by hash only). Rotation runs in one
 * transaction holding the old token's row lock, so two racing refreshes are serialised on any
 * instance, and a reuse revokes the family in the same commit.
 */
import type { Selectable } from 'kysely';
import type { IssuedAccess, RefreshFamilyRecord, RefreshTokenRepository, RefreshTokenState, RotateResult } from '../types.ts';
import type { Db, RefreshTokenFamiliesTable } from './database.ts';

function toFamily(row: Selectable<RefreshTokenFamiliesTable>): RefreshFamilyRecord {
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

export function sqlRefreshTokens(db: Db): RefreshTokenRepository {
  return {
    async createFamily(family, first) {
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('refresh_token_families').values({
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
        }).execute();
        await trx.insertInto('refresh_tokens').values({
          token_hash: first.tokenHash,
          family_id: family.id,
          created_at: first.createdAt,
          expires_at: first.expiresAt < family.expiresAt ? first.expiresAt : family.expiresAt,
          access_jti: first.access.jti,
          access_expires_at: first.access.expiresAt,
        }).execute();
      });
    },

    async find(tokenHash): Promise<RefreshTokenState | undefined> {
      const row = await db.selectFrom('refresh_tokens as t')
        .innerJoin('refresh_token_families as f', 'f.id', 't.family_id')
        .selectAll('f')
        .select(['t.created_at as token_created_at', 't.expires_at as token_expires_at', 't.rotated_at as token_rotated_at'])
        .where('t.token_hash', '=', tokenHash)
        .executeTakeFirst();
      if (!row) return undefined;
      const { token_created_at: createdAt, token_expires_at: expiresAt, token_rotated_at: rotatedAt, ...family } = row;
      return { tokenHash, family: toFamily(family), createdAt, expiresAt, rotatedAt };
    },

    rotate: (input) =>
      db.transaction().execute(async (trx): Promise<RotateResult> => {
        const row = await trx.selectFrom('refresh_tokens as t')
          .innerJoin('refresh_token_families as f', 'f.id', 't.family_id')
          .select(['t.family_id', 't.rotated_at', 't.expires_at', 't.successor_sealed', 'f.client_id', 'f.revoked_at', 'f.expires_at as family_expires_at'])
          .where('t.token_hash', '=', input.oldHash)
          .forUpdate('t')
          .executeTakeFirst();
        if (!row || row.client_id !== input.clientId || row.revoked_at !== null) return { outcome: 'invalid' };
        if (row.rotated_at !== null) {
          const sinceRotation = input.now.getTime() - row.rotated_at.getTime();
          if (sinceRotation <= input.graceSeconds * 1000 && row.successor_sealed) {
            return { outcome: 'grace', successorSealed: row.successor_sealed };
          }
          const revokedAccess = await revokeFamilies(trx, [row.family_id], 'refresh token reused', input.now);
          return { outcome: 'reused', familyId: row.family_id, rotatedAt: row.rotated_at, revokedAccess };
        }
        if (!input.next || row.expires_at <= input.now || row.family_expires_at <= input.now) return { outcome: 'invalid' };
        await trx.updateTable('refresh_tokens')
          .set({ rotated_at: input.now, successor_hash: input.next.tokenHash, successor_sealed: input.next.successorSealed })
          .where('token_hash', '=', input.oldHash)
          .execute();
        await trx.insertInto('refresh_tokens').values({
          token_hash: input.next.tokenHash,
          family_id: row.family_id,
          created_at: input.now,
          // Sliding idle expiry, never past the family's absolute end.
          expires_at: input.next.expiresAt < row.family_expires_at ? input.next.expiresAt : row.family_expires_at,
          access_jti: input.next.access.jti,
          access_expires_at: input.next.access.expiresAt,
        }).execute();
        return { outcome: 'rotated' };
      }),

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

