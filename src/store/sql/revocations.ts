/**
 * The durable record of revocations (migration 2026-11-24-0004): one row per revoked access
 * token or family, announced by a trigger, deleted once the tokens it covers have expired.
 */
import { sql } from 'kysely';
import type { RevocationRecord } from '../records.ts';
import type { RevocationRepository } from '../types.ts';
import type { Db } from './tables.ts';

const toRecord = (row: { jti: string; expires_at: Date }): RevocationRecord => ({ key: row.jti, expiresAt: row.expires_at });

export function sqlRevocations(db: Db): RevocationRepository {
  return {
    async add(records, now) {
      const live = records.filter((r) => r.expiresAt > now);
      if (live.length === 0) return;
      await db.insertInto('revocations')
        .values(live.map((r) => ({ jti: r.key, expires_at: r.expiresAt, revoked_at: now })))
        .onConflict((oc) => oc.column('jti').doNothing())
        .execute();
    },
    async isRevoked(key, now) {
      const row = await db.selectFrom('revocations').select('jti').where('jti', '=', key).where('expires_at', '>', now).executeTakeFirst();
      return row !== undefined;
    },
    async live(now, limit) {
      const rows = await db.selectFrom('revocations').select(['jti', 'expires_at']).where('expires_at', '>', now).limit(limit).execute();
      return rows.map(toRecord);
    },
    async revokeUser(userId, reason, now) {
      const { rows } = await sql<{ revoked_key: string; revoked_until: Date }>`
        SELECT revoked_key, revoked_until FROM idp_revoke_user_tokens(${userId}, ${reason}, ${now})`.execute(db);
      return rows.map((r) => ({ key: r.revoked_key, expiresAt: new Date(r.revoked_until) }));
    },
    async purgeExpired(now, limit) {
      // SKIP LOCKED: instances purging at once share the work instead of waiting on each other.
      const { rows } = await sql<{ jti: string }>`
        DELETE FROM revocations
        WHERE jti IN (SELECT jti FROM revocations WHERE expires_at <= ${now} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING jti`.execute(db);
      return rows.length;
    },
  };
}
