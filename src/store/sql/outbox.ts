/**
 * The outbox (migration 2026-11-27-0060), which is the audit log too (2026-11-29-0100): an event
 * is written when it is audited (`audits`, from the configuration) or an enabled endpoint
 * subscribes to it, and its deliveries with it, in one statement, so that
 * on a transaction's handle they commit, or not, with the change they record; or a batch of
 * events in one statement (one commit, one notification), for those written on their own, whose
 * first attempts the writing instance may take at once (migration 2026-11-27-0085).
 */
import { sql } from 'kysely';
import type { OutboxRepository } from '../types.ts';
import type { Db } from './tables.ts';
import { toClaimed, type ClaimRow } from './webhook-deliveries.ts';

/** Whether an event of this type is kept in the audit log. */
export type AuditsType = (type: string) => boolean;

export function sqlOutbox(db: Db, audits: AuditsType): OutboxRepository {
  return {
    async append(event, endpointId) {
      // The test event of one endpoint goes to it alone, enabled or not, and is no audit event;
      // any other event to every enabled endpoint subscribed to its type or to all (`*`).
      // Neither audited nor subscribed: no row.
      const audited = endpointId === undefined && audits(event.type);
      const { rows } = await sql<{ id: string }>`
        WITH targets AS (
          SELECT id FROM webhook_endpoints
          WHERE CASE WHEN ${endpointId ?? null}::text IS NULL
            THEN enabled AND event_types && ARRAY[${event.type}::text, '*']
            ELSE id = ${endpointId ?? null}::text END
        ), written AS (
          INSERT INTO events (id, type, occurred_at, data)
          SELECT ${event.id}, ${event.type}, ${event.occurredAt}, ${JSON.stringify(event.data)}::jsonb
          WHERE ${audited}::boolean OR EXISTS (SELECT 1 FROM targets)
          RETURNING id
        )
        INSERT INTO webhook_deliveries (event_id, endpoint_id, next_attempt_at, direct)
        SELECT written.id, targets.id, now(), ${endpointId !== undefined} FROM written CROSS JOIN targets
        RETURNING endpoint_id AS id`.execute(db);
      return rows.length;
    },
    async appendMany(events, claim) {
      if (events.length === 0) return { deliveries: 0, claimed: [] };
      const input = JSON.stringify(events.map((e, n) => ({ id: e.id, type: e.type, occurred_at: e.occurredAt.toISOString(), data: e.data, n, audited: audits(e.type) })));
      const busy = claim?.busy ?? new Map<string, number>();
      // Of the deliveries, the caller's first ones per endpoint (up to its room there) and in all
      // (up to `total`) are written claimed: attempt 1 started, under a lease.
      const { rows } = await sql<ClaimRow>`
        WITH input AS (
          SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS x (id text, type text, occurred_at timestamptz, data jsonb, n int, audited boolean)
        ), busy AS (
          SELECT * FROM unnest(${[...busy.keys()]}::text[], ${[...busy.values()]}::int[]) AS b (endpoint_id, n)
        ), targets AS (
          SELECT input.id AS event_id, input.n, e.id AS endpoint_id,
            row_number() OVER (PARTITION BY e.id ORDER BY input.n) + coalesce(busy.n, 0) <= ${claim?.perEndpoint ?? 0} AS within
          FROM input JOIN webhook_endpoints AS e ON e.enabled AND e.event_types && ARRAY[input.type, '*']
          LEFT JOIN busy ON busy.endpoint_id = e.id
        ), ranked AS (
          SELECT event_id, endpoint_id, within AND row_number() OVER (PARTITION BY within ORDER BY n, endpoint_id) <= ${claim?.total ?? 0} AS claimed
          FROM targets
        ), written AS (
          INSERT INTO events (id, type, occurred_at, data)
          SELECT id, type, occurred_at, data FROM input WHERE audited OR id IN (SELECT event_id FROM targets)
          RETURNING id
        ), delivered AS (
          INSERT INTO webhook_deliveries (event_id, endpoint_id, attempts, next_attempt_at)
          SELECT r.event_id, r.endpoint_id, CASE WHEN r.claimed THEN 1 ELSE 0 END,
            CASE WHEN r.claimed THEN now() + make_interval(secs => ${claim?.leaseSeconds ?? 0}) ELSE now() END
          FROM ranked AS r JOIN written ON written.id = r.event_id
          RETURNING id, event_id, endpoint_id, attempts
        ), started AS (
          INSERT INTO webhook_attempts (delivery_id, attempt, started_at) SELECT id, 1, now() FROM delivered WHERE attempts = 1
        )
        SELECT d.id::text AS delivery_id, d.attempts AS attempt, 0 AS step, d.event_id, i.type, i.occurred_at, i.data::text AS data,
          e.id AS endpoint_id, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at
        FROM delivered AS d JOIN input AS i ON i.id = d.event_id JOIN webhook_endpoints AS e ON e.id = d.endpoint_id
        ORDER BY i.n, e.id`.execute(db);
      return { deliveries: rows.length, claimed: rows.filter((row) => row.attempt === 1).map(toClaimed) };
    },
  };
}
