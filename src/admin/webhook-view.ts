/** What the command line and the administration API show of an endpoint and its attempts: never a secret, never a receiver's answer. */
import type { DeliveryAttemptRecord, WebhookEndpointRecord } from '../store/records.ts';
import type { DeliveryAttemptWire, WebhookWire } from './answer-schemas.ts';

/** An endpoint by wire names (answer-schemas.ts describes each member). */
export type WebhookView = WebhookWire;

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

export function toWebhookView(endpoint: WebhookEndpointRecord): WebhookView {
  return {
    id: endpoint.id,
    url: endpoint.url,
    event_types: endpoint.eventTypes,
    enabled: endpoint.enabled,
    description: endpoint.description,
    disabled_reason: endpoint.disabledReason,
    failing_since: iso(endpoint.failingSince),
    previous_secret_expires_at: iso(endpoint.previousSecretExpiresAt),
    created_at: endpoint.createdAt.toISOString(),
    updated_at: endpoint.updatedAt.toISOString(),
  };
}

/** One attempt: the HTTP status, or the kind of error (`timeout`, `redirect`, `refused_address`, …). */
export type DeliveryAttemptView = DeliveryAttemptWire;

export function toAttemptView(a: DeliveryAttemptRecord): DeliveryAttemptView {
  return {
    delivery_id: a.deliveryId, event_id: a.eventId, event_type: a.eventType, attempt: a.attempt,
    started_at: a.startedAt.toISOString(), duration_ms: a.durationMs, status: a.status, error: a.error,
    delivery_state: a.state, next_attempt_at: iso(a.nextAttemptAt),
  };
}

/**
 * An id this service could have given an endpoint (`ep_` and base64url): anything else (a NUL
 * byte, which PostgreSQL refuses) names none, and is never sent to the database.
 */
export const isWebhookId = (id: string): boolean => /^ep_[A-Za-z0-9_-]{1,64}$/.test(id);

/** A delivery's id is a positive bigint. */
export const isDeliveryId = (id: string): boolean => /^[1-9][0-9]{0,17}$/.test(id);
