/** Access tokens issued without a refresh token, until they expire (for end session). */
import { sql } from 'kysely';
import type { AccessTokenRepository } from '../types.ts';
import type { Db } from './tables.ts';

export function sqlAccessTokens(db: Db): AccessTokenRepository {
  return {
    async record(userId, clientId, access, now) {
      // One statement on the code exchange's path: the pair's expired rows go as a new one comes.
      await sql`
        WITH expired AS (
          DELETE FROM issued_access_tokens
          WHERE user_id = ${userId} AND client_id = ${clientId} AND expires_at <= ${now}
        )
        INSERT INTO issued_access_tokens (jti, user_id, client_id, expires_at)
        VALUES (${access.jti}, ${userId}, ${clientId}, ${access.expiresAt})`.execute(db);
    },
    async takeLive(userId, clientId, now) {
      const rows = await db.deleteFrom('issued_access_tokens')
        .where('user_id', '=', userId).where('client_id', '=', clientId)
        .returning(['jti', 'expires_at'])
        .execute();
      return rows.filter((r) => r.expires_at > now).map((r) => ({ jti: r.jti, expiresAt: r.expires_at }));
    },
  };
}
