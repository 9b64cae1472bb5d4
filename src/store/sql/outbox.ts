/**
 * The outbox (migration 2026-11-27-0060): an event and its deliveries in one statement, so that
 * on a transaction's handle they commit, or not, with the change they record.
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
  };
}
