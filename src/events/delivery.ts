/**
 * One attempt at a delivery: the Standard Webhooks request (body `{type, timestamp, data}`,
 * headers `webhook-id`, `webhook-timestamp`, `webhook-signature`), then what follows: success,
 * the next retry of the schedule, or the end; and the endpoint disabled when it answered 410
 * Gone or has failed for 5 days, with the audit event written in the same transaction.
 */
import type { Clock } from '../clock.ts';
import type { AttemptOutcome, ClaimedAttempt, DeliveryNext, DurableStore, WebhookDisabledReason } from '../store/types.ts';
import type { AddressPolicy } from './addresses.ts';
import type { WebhookEndpointDisabled } from './audit-events.ts';
import { outboxEventOf } from './outbox-sink.ts';
import type { Audit } from './record.ts';
import { DISABLE_AFTER_FAILING_SECONDS, retryDelay } from './retry.ts';
import { signWebhook } from './signature.ts';
import { postWebhook, type WebhookAnswer, type WebhookRequest } from './webhook-request.ts';

export interface AttemptDeps {
  durable: Pick<DurableStore, 'webhooks' | 'transaction'>;
  policy: AddressPolicy;
  /** IDP_WEBHOOK_RETRY_SCALE. */
  retryScale: number;
  /** Opens an endpoint's sealed secret (`whsec_…`). */
  openSecret: (endpointId: string, sealed: string) => string;
  audit: Audit;
  clock: Clock;
  /** Counts each attempt by result: `succeeded` or the error's kind. */
  countResult?: (result: string) => void;
  /** The request itself (tests of the schedule may replace it; the service never does). */
  post?: (request: WebhookRequest, policy: AddressPolicy) => Promise<WebhookAnswer>;
}

/** The request of an attempt, signed with the endpoint's secret and, during a change, its previous one. */
export function webhookRequestOf(claimed: ClaimedAttempt, openSecret: AttemptDeps['openSecret'], now: number): WebhookRequest {
  const { event, endpoint } = claimed;
  const body = JSON.stringify({ type: event.type, timestamp: event.occurredAt.toISOString(), data: event.data });
  const timestamp = Math.floor(now / 1000);
  const keepsPrevious = endpoint.previousSecretSealed !== null && endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt.getTime() > now;
  const secrets = [openSecret(endpoint.id, endpoint.secretSealed), ...(keepsPrevious ? [openSecret(endpoint.id, endpoint.previousSecretSealed as string)] : [])];
  return {
    url: endpoint.url,
    body,
    headers: { 'webhook-id': event.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secrets, event.id, timestamp, body) },
  };
}

function nextOf(claimed: ClaimedAttempt, answer: WebhookAnswer, scale: number): DeliveryNext {
  if (answer.error === null) return { state: 'succeeded' };
  if (answer.status === 410) return { state: 'failed' };
  const delay = retryDelay(claimed.step, scale);
  return delay === undefined ? { state: 'failed' } : { state: 'pending', retryInSeconds: delay };
}

export async function attemptDelivery(claimed: ClaimedAttempt, deps: AttemptDeps): Promise<void> {
  const request = webhookRequestOf(claimed, deps.openSecret, deps.clock());
  const answer = await (deps.post ?? postWebhook)(request, deps.policy);
  const outcome: AttemptOutcome = { status: answer.status, error: answer.error, durationMs: answer.durationMs };
  const next = nextOf(claimed, answer, deps.retryScale);
  await deps.durable.webhooks.finish({ ...claimed, endpointId: claimed.endpoint.id }, outcome, next);
  deps.countResult?.(answer.error ?? 'succeeded');
  if (answer.status === 410) await disableEndpoint(claimed.endpoint.id, 'gone', deps);
  else if (answer.error !== null) await disableEndpoint(claimed.endpoint.id, 'failing', deps);
}

/** Disables the endpoint if it is to be (the database decides, once), with its audit event. */
async function disableEndpoint(endpointId: string, reason: WebhookDisabledReason, deps: AttemptDeps): Promise<void> {
  const event: WebhookEndpointDisabled = { type: 'webhook_endpoint_disabled', endpoint_id: endpointId, reason };
  const failingFor = DISABLE_AFTER_FAILING_SECONDS * deps.retryScale;
  const disabled = await deps.durable.transaction(async (tx) => {
    if (!(await tx.webhooks.disable(endpointId, reason, failingFor))) return false;
    await tx.outbox.append(outboxEventOf(event, deps.clock));
    return true;
  });
  if (disabled) deps.audit(event, { inOutbox: true });
}
