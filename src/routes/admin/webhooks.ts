/**
 * `/webhooks`: endpoints (list, create with its secret once, read, change, remove), a new secret
 * (once; the old one signs beside it for 24 hours), a test event, the delivery log (status or
 * error kind, never a receiver's answer) and redelivery. Scope `admin_console_webhooks` or
 * `admin_api`; `admin_api_readonly` reads. src/admin/ writes each change's event to the outbox
 * in the change's transaction: it is logged here as already there.
 */
import { z } from 'zod';
import { pageOfList } from '../../admin/keyset.ts';
import { MAX_DESCRIPTION_LENGTH, MAX_URL_LENGTH } from '../../admin/webhook-rules.ts';
import {
  countWebhookDeliveries, createWebhook, getVersionedWebhook, listWebhookDeliveries, listWebhooks, redeliverWebhook, removeWebhook,
  rotateWebhookSecret, testWebhook, updateWebhook, type WebhookDeps,
} from '../../admin/webhooks.ts';
import { deliveryAttemptPageWire, redeliveryWire, webhookPageWire, webhookTestWire, webhookWire, webhookWithSecretWire } from '../../admin/answer-schemas.ts';
import type { AdminApiDeps } from './deps.ts';
import { operation, type Operation } from './operation.ts';
import { listOperation, pageAnswer, pageQuery, pageRequest, totalIfAsked } from './keyset.ts';

const webhookFields = {
  url: z.string().max(MAX_URL_LENGTH).describe('Where events are POSTed: https (http and loopback outside production only); no private, link-local or reserved address unless IDP_WEBHOOK_ALLOWED_NETWORKS allows it.'),
  event_types: z.array(z.string().max(100)).min(1).max(100).describe('Event types (the audit events\' types, webhook.test aside), or ["*"] for every one.'),
  enabled: z.boolean(),
  description: z.string().max(MAX_DESCRIPTION_LENGTH),
};
const newWebhook = z.strictObject({
  url: webhookFields.url,
  event_types: webhookFields.event_types.optional().describe('Default ["*"].'),
  enabled: webhookFields.enabled.optional().describe('Default true.'),
  description: webhookFields.description.optional(),
});
// RFC 7396: a member left out is kept; a null description clears it.
const webhookPatch = z.strictObject({
  url: webhookFields.url.optional(),
  event_types: webhookFields.event_types.optional(),
  enabled: webhookFields.enabled.optional().describe('Enabling an endpoint the service disabled (it answered 410, or failed for 5 days) resumes its deliveries.'),
  description: webhookFields.description.nullable().optional(),
});
const webhookPath = (id: string) => `/webhooks/${encodeURIComponent(id)}`;
const webhookDeps = (deps: AdminApiDeps): WebhookDeps => ({ durable: deps.durable, clock: deps.clock, ...deps.webhooks });

export const WEBHOOK_OPERATIONS: Operation[] = [
  listOperation({
    path: '/webhooks', operationId: 'listWebhooks', summary: 'List webhook endpoints, by id', area: 'webhooks',
    read: async (deps, request) => pageOfList(await listWebhooks(deps), (endpoint) => endpoint.id, request),
    count: async (deps) => (await listWebhooks(deps)).length,
    document: (endpoint) => endpoint, page: webhookPageWire,
  }),
  operation<z.output<typeof newWebhook>>({
    method: 'POST', path: '/webhooks', operationId: 'createWebhook', summary: 'Add a webhook endpoint', area: 'webhooks', idempotent: true,
    body: { schema: newWebhook, mediaType: 'application/json' },
    responses: { 201: { description: 'The endpoint, with its secret (whsec_…) shown this once', body: webhookWithSecretWire, etag: true } },
    handle: async (call) => {
      const { endpoint, version, secret } = await createWebhook(webhookDeps(call.deps), call.body, call.actor);
      return { status: 201, body: { ...endpoint, secret }, version, location: webhookPath(endpoint.id) };
    },
  }),
  operation({
    method: 'GET', path: '/webhooks/{id}', operationId: 'getWebhook', summary: 'One webhook endpoint', area: 'webhooks', responses: { 200: { description: 'The endpoint', body: webhookWire, etag: true } },
    handle: async ({ deps, params }) => {
      const { endpoint, version } = await getVersionedWebhook(deps, params.id ?? '');
      return { status: 200, body: endpoint, version };
    },
  }),
  operation<z.output<typeof webhookPatch>>({
    method: 'PATCH', path: '/webhooks/{id}', operationId: 'updateWebhook', summary: 'Change a webhook endpoint (JSON merge patch, RFC 7396)', area: 'webhooks', ifMatch: true,
    body: { schema: webhookPatch, mediaType: 'application/merge-patch+json' },
    responses: { 200: { description: 'The endpoint as changed', body: webhookWire, etag: true } },
    handle: async (call) => {
      const { description, ...rest } = call.body;
      const change = { ...rest, ...(description === undefined ? {} : { description: description ?? '' }) };
      const { endpoint, version } = await updateWebhook(webhookDeps(call.deps), call.params.id ?? '', change, call.actor, call.ifVersion);
      return { status: 200, body: endpoint, version };
    },
  }),
  operation({
    method: 'DELETE', path: '/webhooks/{id}', operationId: 'deleteWebhook', summary: 'Remove a webhook endpoint (its pending deliveries too)', area: 'webhooks', ifMatch: true,
    responses: { 204: { description: 'Removed' } },
    handle: async (call) => {
      await removeWebhook(webhookDeps(call.deps), call.params.id ?? '', call.actor, call.ifVersion);
      return { status: 204 };
    },
  }),
  operation({
    method: 'POST', path: '/webhooks/{id}/secret', operationId: 'rotateWebhookSecret', area: 'webhooks', idempotent: true,
    summary: 'Give an endpoint a new secret; the one it replaces keeps signing beside it for 24 hours',
    responses: { 200: { description: 'The endpoint, with the new secret shown this once', body: webhookWithSecretWire, etag: true } },
    handle: async (call) => {
      const { endpoint, version, secret } = await rotateWebhookSecret(webhookDeps(call.deps), call.params.id ?? '', call.actor);
      return { status: 200, body: { ...endpoint, secret }, version };
    },
  }),
  operation({
    method: 'POST', path: '/webhooks/{id}/test', operationId: 'testWebhook', area: 'webhooks', idempotent: true,
    summary: 'Send a webhook.test event to this endpoint alone (enabled or not)',
    responses: { 202: { description: 'The event is on its way', body: webhookTestWire } },
    handle: async ({ deps, params }) => ({ status: 202, body: { event_id: (await testWebhook(deps, params.id ?? '')).eventId } }),
  }),
  operation<undefined, z.output<typeof pageQuery>>({
    method: 'GET', path: '/webhooks/{id}/deliveries', operationId: 'listWebhookDeliveries', area: 'webhooks', query: pageQuery,
    summary: 'The delivery attempts, newest first: event id and type, attempt, time, HTTP status or error kind, duration, next attempt (never what the receiver answered)',
    responses: { 200: { description: 'A page of attempts (total with count=true)', body: deliveryAttemptPageWire } },
    handle: async ({ deps, params, query }) => {
      const request = pageRequest(query);
      const page = await listWebhookDeliveries(deps, params.id ?? '', request);
      return pageAnswer(page, (view) => view, { limit: request.limit, total: await totalIfAsked(query, () => countWebhookDeliveries(deps, params.id ?? '')) });
    },
  }),
  operation({
    method: 'POST', path: '/webhooks/{id}/deliveries/{delivery_id}/redeliver', operationId: 'redeliverWebhook', area: 'webhooks', idempotent: true,
    summary: 'Deliver again, at once and from the start of the retry schedule (the same webhook-id)',
    responses: { 202: { description: 'Due now', body: redeliveryWire } },
    handle: async ({ deps, params }) => ({ status: 202, body: { delivery_id: (await redeliverWebhook(deps, params.id ?? '', params.delivery_id ?? '')).deliveryId } }),
  }),
];
