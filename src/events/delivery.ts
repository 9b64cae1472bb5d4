/**
 * One attempt at a delivery: the Standard Webhooks request (body `{type, timestamp, data}`,
 * headers `webhook-id`, `webhook-timestamp`, `webhook-signature`), then what follows: success,
 * the next retry of the schedule, or the end, recorded with other attempts that ended about
 * then; and the endpoint disabled when it answered 410 Gone or has failed for 5 days, with the
 * audit event written in the same transaction.
 */
import type { KeyObject } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { ClaimedAttempt, DeliveryNext, DurableStore, FinishedAttempt, WebhookDisabledReason } from '../store/types.ts';
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
  /** The HMAC key of an endpoint's sealed secret (`whsec_…`). */
  signingKey: (endpointId: string, sealed: string) => KeyObject;
  audit: Audit;
  clock: Clock;
  /** Counts each attempt by result: `succeeded` or the error's kind. */
  countResult?: (result: string) => void;
  /** The request itself (tests of the schedule may replace it; the service never does). */
  post?: (request: WebhookRequest, policy: AddressPolicy) => Promise<WebhookAnswer>;
}

/** The request of an attempt, signed with the endpoint's secret and, during a change, its previous one. */
export function webhookRequestOf(claimed: ClaimedAttempt, signingKey: AttemptDeps['signingKey'], now: number): WebhookRequest {
  const { event, endpoint } = claimed;
  // The data as the database keeps it: valid JSON already, not parsed to be serialised again.
  const body = `{"type":${JSON.stringify(event.type)},"timestamp":"${event.occurredAt.toISOString()}","data":${event.dataJson}}`;
  const timestamp = Math.floor(now / 1000);
  const keepsPrevious = endpoint.previousSecretSealed !== null && endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt.getTime() > now;
  const keys = [signingKey(endpoint.id, endpoint.secretSealed), ...(keepsPrevious ? [signingKey(endpoint.id, endpoint.previousSecretSealed as string)] : [])];
  return {
    url: endpoint.url,
    body,
    headers: { 'webhook-id': event.id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(keys, event.id, timestamp, body) },
  };
}

function nextOf(claimed: ClaimedAttempt, answer: WebhookAnswer, scale: number): DeliveryNext {
  if (answer.error === null) return { state: 'succeeded' };
  if (answer.status === 410) return { state: 'failed' };
  const delay = retryDelay(claimed.step, scale);
  return delay === undefined ? { state: 'failed' } : { state: 'pending', retryInSeconds: delay };
}

/** Makes one attempt: the request, then what follows for its delivery (recorded by `recordFinished`). */
export async function attemptDelivery(claimed: ClaimedAttempt, deps: AttemptDeps): Promise<FinishedAttempt & { gone: boolean }> {
  const request = webhookRequestOf(claimed, deps.signingKey, deps.clock());
  const answer = await (deps.post ?? postWebhook)(request, deps.policy);
  deps.countResult?.(answer.error ?? 'succeeded');
  return {
    deliveryId: claimed.deliveryId, attempt: claimed.attempt, endpointId: claimed.endpoint.id, gone: answer.status === 410,
    outcome: { status: answer.status, error: answer.error, durationMs: answer.durationMs }, next: nextOf(claimed, answer, deps.retryScale),
  };
}

/**
 * Records attempts that ended, in one statement; then an endpoint among them that answered 410,
 * or whose attempts failed, is disabled if it is to be (once per endpoint).
 */
export async function recordFinished(finished: ReadonlyArray<FinishedAttempt & { gone: boolean }>, deps: AttemptDeps): Promise<void> {
  await deps.durable.webhooks.finish(finished);
  const failed = new Map<string, WebhookDisabledReason>();
  for (const f of finished) {
    if (f.gone) failed.set(f.endpointId, 'gone');
    else if (f.outcome.error !== null && !failed.has(f.endpointId)) failed.set(f.endpointId, 'failing');
  }
  for (const [endpointId, reason] of failed) await disableEndpoint(endpointId, reason, deps);
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
