/**
 * The outbox (migration 2026-11-27-0060): an event and its deliveries in one statement, so that
 * on a transaction's handle they commit, or not, with the change they record; or a batch of
 * events in one statement (one commit, one notification), for those written on their own.
 */
import { sql } from 'kysely';
import type { OutboxRepository } from '../types.ts';
import type { Db } from './tables.ts';

export function sqlOutbox(db: Db): OutboxRepository {
  return {
    async append(event, endpointId) {
      // The test event of one endpoint goes to it alone, enabled or not; any other event to
      // every enabled endpoint subscribed to its type or to all (`*`). No subscriber: no row.
      const { rows } = await sql<{ id: string }>`
        WITH targets AS (
          SELECT id FROM webhook_endpoints
          WHERE CASE WHEN ${endpointId ?? null}::text IS NULL
            THEN enabled AND event_types && ARRAY[${event.type}::text, '*']
            ELSE id = ${endpointId ?? null}::text END
        ), written AS (
          INSERT INTO events (id, type, occurred_at, data)
          SELECT ${event.id}, ${event.type}, ${event.occurredAt}, ${JSON.stringify(event.data)}::jsonb
          WHERE EXISTS (SELECT 1 FROM targets)
          RETURNING id
        )
        INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at)
        SELECT written.id, targets.id, now() FROM written CROSS JOIN targets
        RETURNING endpoint_id AS id`.execute(db);
      return rows.length;
    },
    async appendMany(events) {
      if (events.length === 0) return 0;
      const input = JSON.stringify(events.map((e) => ({ id: e.id, type: e.type, occurred_at: e.occurredAt.toISOString(), data: e.data })));
      const { rows } = await sql<{ id: string }>`
        WITH input AS (
          SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS x (id text, type text, occurred_at timestamptz, data jsonb)
        ), targets AS (
          SELECT input.id AS event_id, e.id AS endpoint_id
          FROM input JOIN webhook_endpoints AS e ON e.enabled AND e.event_types && ARRAY[input.type, '*']
        ), written AS (
          INSERT INTO events (id, type, occurred_at, data)
          SELECT id, type, occurred_at, data FROM input WHERE id IN (SELECT event_id FROM targets)
          RETURNING id
        )
        INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at)
        SELECT targets.event_id, targets.endpoint_id, now() FROM targets JOIN written ON written.id = targets.event_id
        RETURNING endpoint_id AS id`.execute(db);
      return rows.length;
    },
  };
}
