/**
 * The audit log over `events` (migration 2026-11-29-0100): newest first by (occurred_at, id),
 * each filter served by an index in that order (a type by `events_type`, a user by `events_user`,
 * a client by `events_client`, the time alone by `events_newest`), and the page's cursor a place in
 * it, so that events written meanwhile neither shift nor repeat the next page.
 */
import { sql, type RawBuilder } from 'kysely';
import type { AuditLogFilter, AuditLogRepository } from '../contracts/audit-log.ts';
import type { Db } from './tables.ts';

type Condition = RawBuilder<boolean>;

/** An event's time in microseconds, exact as stored (a JavaScript Date holds milliseconds). */
const MICROS = sql<string>`(extract(epoch FROM occurred_at) * 1000000)::bigint`;

function conditions(filter: AuditLogFilter): Condition[] {
  return [
    ...(filter.types === undefined || filter.types.length === 0 ? [] : [sql<boolean>`type = ANY(${[...filter.types]}::text[])`]),
    ...(filter.userId === undefined ? [] : [sql<boolean>`user_id = ${filter.userId}::text`]),
    ...(filter.clientId === undefined ? [] : [sql<boolean>`client_id = ${filter.clientId}::text`]),
    ...(filter.since === undefined ? [] : [sql<boolean>`occurred_at >= ${filter.since}::timestamptz`]),
    ...(filter.until === undefined ? [] : [sql<boolean>`occurred_at < ${filter.until}::timestamptz`]),
  ];
}

const allOf = (list: readonly Condition[]): Condition => (list.length === 0 ? sql<boolean>`true` : sql<boolean>`${sql.join(list, sql` AND `)}`);

const date = (value: Date | string) => (value instanceof Date ? value : new Date(value));

export function sqlAuditLog(db: Db): AuditLogRepository {
  return {
    async list(query) {
      const { cursor } = query;
      // The cursor's time back to a timestamp exactly: to_timestamp would round through a double.
      const after = cursor === undefined ? [] : [sql<boolean>`(occurred_at, id) < (timestamptz 'epoch' + ${cursor.micros}::bigint * interval '1 microsecond', ${cursor.id}::text)`];
      const { rows } = await sql<{ id: string; type: string; occurred_at: Date | string; data: Record<string, unknown> | string; user_id: string | null; client_id: string | null; micros: string }>`
        SELECT id, type, occurred_at, data, user_id, client_id, ${MICROS}::text AS micros FROM events
        WHERE ${allOf([...conditions(query), ...after])}
        ORDER BY occurred_at DESC, id DESC LIMIT ${query.limit}`.execute(db);
      return rows.map((row) => ({
        id: row.id, type: row.type, occurredAt: date(row.occurred_at),
        data: typeof row.data === 'string' ? (JSON.parse(row.data) as Record<string, unknown>) : row.data,
        userId: row.user_id, clientId: row.client_id,
        cursor: { micros: row.micros, id: row.id },
      }));
    },
    async count(filter) {
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM events WHERE ${allOf(conditions(filter))}`.execute(db);
      return Number(rows[0]?.n ?? 0);
    },
    async purge(purge, limit) {
      const ofTypes = purge.types === undefined ? [] : [sql<boolean>`type = ANY(${[...purge.types]}::text[])`];
      const { rows } = await sql<{ id: string }>`
        DELETE FROM events
        WHERE id IN (SELECT id FROM events WHERE ${allOf([sql<boolean>`occurred_at < ${purge.before}::timestamptz`, ...ofTypes])}
          LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING id`.execute(db);
      return rows.length;
    },
  };
}
