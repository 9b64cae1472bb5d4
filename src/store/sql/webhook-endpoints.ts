/** The `webhook_endpoints` table <-> WebhookEndpointRecord. */
import { sql, type Selectable } from 'kysely';
import type { WebhookDisabledReason, WebhookEndpointRecord } from '../records.ts';
import type { WebhookRepository } from '../types.ts';
import type { Db, WebhookEndpointsTable } from './tables.ts';

const COLUMNS = [
  'id', 'url', 'event_types', 'enabled', 'description', 'secret_sealed', 'previous_secret_sealed',
  'previous_secret_expires_at', 'disabled_reason', 'failing_since', 'created_at', 'updated_at', 'version',
] as const satisfies ReadonlyArray<keyof WebhookEndpointsTable>;

function toRecord(row: Selectable<WebhookEndpointsTable>): WebhookEndpointRecord {
  return {
    id: row.id,
    url: row.url,
    eventTypes: row.event_types,
    enabled: row.enabled,
    description: row.description,
    secretSealed: row.secret_sealed,
    previousSecretSealed: row.previous_secret_sealed,
    previousSecretExpiresAt: row.previous_secret_expires_at,
    disabledReason: row.disabled_reason as WebhookDisabledReason | null,
    failingSince: row.failing_since,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    version: Number(row.version),
  };
}

type EndpointOperations = Pick<WebhookRepository, 'create' | 'get' | 'list' | 'update' | 'remove' | 'subscribedTypes' | 'disable'>;

export function sqlWebhookEndpoints(db: Db): EndpointOperations {
  return {
    async create(endpoint) {
      const row = await db.insertInto('webhook_endpoints').values({
        id: endpoint.id, url: endpoint.url, event_types: endpoint.eventTypes, enabled: endpoint.enabled,
        description: endpoint.description, secret_sealed: endpoint.secretSealed,
      }).returning(COLUMNS).executeTakeFirstOrThrow();
      return toRecord(row);
    },
    async get(id) {
      const row = await db.selectFrom('webhook_endpoints').select(COLUMNS).where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },
    async list() {
      const rows = await db.selectFrom('webhook_endpoints').select(COLUMNS).orderBy('id').execute();
      return rows.map(toRecord);
    },
    async update(id, change, ifVersion) {
      let query = db.updateTable('webhook_endpoints').set({
        ...(change.url !== undefined ? { url: change.url } : {}),
        ...(change.eventTypes !== undefined ? { event_types: change.eventTypes } : {}),
        ...(change.description !== undefined ? { description: change.description } : {}),
        ...(change.secretSealed !== undefined ? { secret_sealed: change.secretSealed } : {}),
        ...(change.previousSecretSealed !== undefined ? { previous_secret_sealed: change.previousSecretSealed } : {}),
        ...(change.previousSecretExpiresAt !== undefined ? { previous_secret_expires_at: change.previousSecretExpiresAt } : {}),
        ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
        // Enabled again by an administrator: the failures before count no more.
        ...(change.enabled === true ? { disabled_reason: null, failing_since: null } : {}),
        updated_at: sql<Date>`now()`,
      }).where('id', '=', id);
      if (ifVersion !== undefined) query = query.where('version', '=', ifVersion);
      const row = await query.returning(COLUMNS).executeTakeFirst();
      return row && toRecord(row);
    },
    async remove(id, ifVersion) {
      let query = db.deleteFrom('webhook_endpoints').where('id', '=', id);
      if (ifVersion !== undefined) query = query.where('version', '=', ifVersion);
      const result = await query.executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
    async subscribedTypes() {
      const { rows } = await sql<{ type: string }>`
        SELECT DISTINCT unnest(event_types) AS type FROM webhook_endpoints WHERE enabled`.execute(db);
      return rows.map((r) => r.type);
    },
    async disable(endpointId, reason, failingForSeconds) {
      const { rows } = await sql<{ id: string }>`
        UPDATE webhook_endpoints SET enabled = false, disabled_reason = ${reason}, updated_at = now()
        WHERE id = ${endpointId} AND enabled
          AND (${reason} = 'gone' OR failing_since <= now() - make_interval(secs => ${failingForSeconds}))
        RETURNING id`.execute(db);
      return rows.length > 0;
    },
  };
}
