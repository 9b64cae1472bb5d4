/**
 * Deliveries and their attempts (migrations 2026-11-27-0060 and 0065). Claiming is one
 * statement: due deliveries of enabled endpoints (and the direct ones, a test, of any endpoint), at most so many per endpoint, locked with SKIP LOCKED so
 * that concurrent instances take different ones, moved a lease into the future and their new
 * attempt recorded as started. An instance that dies mid-attempt leaves the delivery due again
 * when the lease ends; the next claim marks the lost attempt `interrupted`.
 */
import { sql } from 'kysely';
import type { ClaimedAttempt, DeliveryAttemptRecord, FinishedAttempt } from '../records.ts';
import type { WebhookRepository } from '../types.ts';
import type { Db } from './tables.ts';

export interface ClaimRow {
  delivery_id: string;
  attempt: number;
  step: number;
  event_id: string;
  type: string;
  occurred_at: Date | string;
  data: string;
  endpoint_id: string;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | string | null;
}

const date = (value: Date | string) => (value instanceof Date ? value : new Date(value));

export function toClaimed(row: ClaimRow): ClaimedAttempt {
  return {
    deliveryId: String(row.delivery_id),
    attempt: row.attempt,
    step: row.step,
    event: { id: row.event_id, type: row.type, occurredAt: date(row.occurred_at), dataJson: row.data },
    endpoint: {
      id: row.endpoint_id, url: row.url, secretSealed: row.secret_sealed, previousSecretSealed: row.previous_secret_sealed,
      previousSecretExpiresAt: row.previous_secret_expires_at === null ? null : date(row.previous_secret_expires_at),
    },
  };
}

type DeliveryOperations = Omit<WebhookRepository, 'create' | 'get' | 'list' | 'update' | 'remove' | 'subscribedTypes' | 'disable'>;

export function sqlWebhookDeliveries(db: Db): DeliveryOperations {
  return {
    async claim({ total, perEndpoint, busy, leaseSeconds }) {
      const { rows } = await sql<ClaimRow>`
        WITH busy AS (
          SELECT * FROM unnest(${[...busy.keys()]}::text[], ${[...busy.values()]}::int[]) AS b (endpoint_id, n)
        ), candidates AS (
          -- Per enabled endpoint, its earliest due deliveries, as many as it may have in flight
          -- (webhook_deliveries_endpoint_due): the backlog behind them is not read.
          SELECT due.id, due.next_attempt_at FROM webhook_endpoints AS e LEFT JOIN busy ON busy.endpoint_id = e.id
          CROSS JOIN LATERAL (
            SELECT id, next_attempt_at FROM webhook_deliveries
            WHERE endpoint_id = e.id AND state = 'pending' AND next_attempt_at <= now()
            ORDER BY next_attempt_at LIMIT greatest(0, ${perEndpoint} - coalesce(busy.n, 0))) AS due
          WHERE e.enabled
          -- A test sent to one endpoint goes out enabled or not (migration 2026-11-29-0020).
          UNION ALL
          SELECT d.id, d.next_attempt_at FROM webhook_deliveries AS d JOIN webhook_endpoints AS e ON e.id = d.endpoint_id AND NOT e.enabled
          WHERE d.direct AND d.state = 'pending' AND d.next_attempt_at <= now()
          ORDER BY next_attempt_at LIMIT ${total}
        ), claimed AS (
          UPDATE webhook_deliveries AS d
          SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => ${leaseSeconds})
          WHERE d.id IN (
            SELECT id FROM webhook_deliveries
            WHERE id IN (SELECT id FROM candidates) AND state = 'pending' AND next_attempt_at <= now()
            FOR UPDATE SKIP LOCKED)
          RETURNING d.id, d.event_id, d.endpoint_id, d.attempts, d.step
        ), started AS (
          INSERT INTO webhook_attempts (delivery_id, attempt, started_at) SELECT id, attempts, now() FROM claimed
        ), interrupted AS (
          UPDATE webhook_attempts AS a SET error = 'interrupted'
          FROM claimed WHERE a.delivery_id = claimed.id AND a.attempt < claimed.attempts AND a.duration_ms IS NULL AND a.error IS NULL
        )
        SELECT c.id::text AS delivery_id, c.attempts AS attempt, c.step, ev.id AS event_id, ev.type, ev.occurred_at, ev.data::text AS data,
          e.id AS endpoint_id, e.url, e.secret_sealed, e.previous_secret_sealed, e.previous_secret_expires_at
        FROM claimed AS c JOIN events AS ev ON ev.id = c.event_id JOIN webhook_endpoints AS e ON e.id = c.endpoint_id`.execute(db);
      return rows.map(toClaimed);
    },
    async finish(attempts) {
      if (attempts.length === 0) return;
      const column = <T>(pick: (a: FinishedAttempt) => T) => attempts.map(pick);
      // An endpoint's row is written only when it turns failing or healthy (by the last of its
      // attempts here): not at every delivery. Only a delivery's latest attempt decides its state:
      // a late answer to an attempt whose lease ran out (another instance tried again since) is
      // recorded, and changes nothing else.
      await sql`
        WITH input AS (
          SELECT * FROM unnest(${column((a) => a.deliveryId)}::bigint[], ${column((a) => a.attempt)}::int[],
            ${column((a) => a.endpointId)}::text[], ${column((a) => a.outcome.durationMs)}::int[], ${column((a) => a.outcome.status)}::int[],
            ${column((a) => a.outcome.error)}::text[], ${column((a) => a.next.state)}::text[],
            ${column((a) => (a.next.state === 'pending' ? a.next.retryInSeconds : null))}::float8[])
            WITH ORDINALITY AS x (delivery_id, attempt, endpoint_id, duration_ms, status, error, state, retry, n)
        ), recorded AS (
          UPDATE webhook_attempts AS a SET duration_ms = i.duration_ms, status = i.status, error = i.error
          FROM input AS i WHERE a.delivery_id = i.delivery_id AND a.attempt = i.attempt
        ), moved AS (
          UPDATE webhook_deliveries AS d SET state = i.state, step = d.step + 1,
            next_attempt_at = CASE WHEN i.state = 'pending' THEN now() + make_interval(secs => i.retry) END
          FROM input AS i WHERE d.id = i.delivery_id AND d.attempts = i.attempt
          RETURNING d.id, i.n
        ), latest AS (
          SELECT DISTINCT ON (i.endpoint_id) i.endpoint_id, i.state = 'succeeded' AS ok
          FROM input AS i JOIN moved AS m ON m.n = i.n ORDER BY i.endpoint_id, i.n DESC
        )
        UPDATE webhook_endpoints AS e SET failing_since = CASE WHEN l.ok THEN NULL ELSE coalesce(e.failing_since, now()) END
        FROM latest AS l WHERE e.id = l.endpoint_id AND (e.failing_since IS NULL) = NOT l.ok`.execute(db);
    },
    async nextDueIn() {
      const { rows } = await sql<{ seconds: number | string | null }>`
        SELECT greatest(0, extract(epoch FROM min(due.next_attempt_at) - now()))::float8 AS seconds FROM (
          SELECT d.next_attempt_at FROM webhook_endpoints AS e CROSS JOIN LATERAL (
            SELECT next_attempt_at FROM webhook_deliveries
            WHERE endpoint_id = e.id AND state = 'pending' ORDER BY next_attempt_at LIMIT 1) AS d
          WHERE e.enabled
          UNION ALL
          SELECT min(next_attempt_at) FROM webhook_deliveries WHERE direct AND state = 'pending') AS due`.execute(db);
      const seconds = rows[0]?.seconds;
      return seconds === null || seconds === undefined ? undefined : Number(seconds);
    },
    async attempts(endpointId, limit, after) {
      // A key is `micros.delivery.attempt`: the start time exact to the microsecond (as stored).
      const [micros = '0', deliveryId = '0', attempt = '0'] = after?.split('.') ?? [];
      const { rows } = await sql<{
        key: string; delivery_id: string; event_id: string; type: string; attempt: number; started_at: Date | string; duration_ms: number | null;
        status: number | null; error: string | null; state: string; next_attempt_at: Date | string | null;
      }>`
        SELECT (extract(epoch FROM a.started_at) * 1000000)::bigint || '.' || a.delivery_id || '.' || a.attempt AS key,
          d.id::text AS delivery_id, d.event_id, ev.type, a.attempt, a.started_at, a.duration_ms, a.status, a.error, d.state, d.next_attempt_at
        FROM webhook_attempts AS a JOIN webhook_deliveries AS d ON d.id = a.delivery_id JOIN events AS ev ON ev.id = d.event_id
        WHERE d.endpoint_id = ${endpointId}
          AND (${after === undefined} OR ((extract(epoch FROM a.started_at) * 1000000)::bigint, a.delivery_id, a.attempt)
            < (${micros}::bigint, ${deliveryId}::bigint, ${attempt}::int))
        ORDER BY a.started_at DESC, a.delivery_id DESC, a.attempt DESC LIMIT ${limit}`.execute(db);
      return rows.map((r): DeliveryAttemptRecord => ({
        key: r.key, deliveryId: String(r.delivery_id), eventId: r.event_id, eventType: r.type, attempt: r.attempt, startedAt: date(r.started_at),
        durationMs: r.duration_ms, status: r.status, error: r.error, state: r.state as DeliveryAttemptRecord['state'],
        nextAttemptAt: r.next_attempt_at === null ? null : date(r.next_attempt_at),
      }));
    },
    async countAttempts(endpointId) {
      const { rows } = await sql<{ n: string }>`
        SELECT count(*) AS n FROM webhook_attempts AS a JOIN webhook_deliveries AS d ON d.id = a.delivery_id WHERE d.endpoint_id = ${endpointId}`.execute(db);
      return Number(rows[0]?.n ?? 0);
    },
    async redeliver(endpointId, deliveryId) {
      if (!/^\d{1,18}$/.test(deliveryId)) return false;
      const { rows } = await sql<{ id: string }>`
        WITH moved AS (
          UPDATE webhook_deliveries SET state = 'pending', step = 0, next_attempt_at = now()
          WHERE id = ${deliveryId}::bigint AND endpoint_id = ${endpointId}
          RETURNING id
        )
        SELECT id::text AS id, pg_notify('idp_changes', 'webhook_due') FROM moved`.execute(db);
      return rows.length > 0;
    },
    async backlog() {
      const { rows } = await sql<{ pending: number | string; oldest: number | string | null }>`
        SELECT count(*)::int AS pending, extract(epoch FROM now() - min(ev.occurred_at))::float8 AS oldest
        FROM webhook_deliveries AS d JOIN webhook_endpoints AS e ON e.id = d.endpoint_id AND e.enabled
        JOIN events AS ev ON ev.id = d.event_id
        WHERE d.state = 'pending'`.execute(db);
      const row = rows[0];
      return { pending: Number(row?.pending ?? 0), oldestAgeSeconds: Math.max(0, Number(row?.oldest ?? 0)) };
    },
  };
}
