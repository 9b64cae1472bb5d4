/**
 * Webhook endpoints: the operations of `idp webhooks` and of the administration API's
 * `/webhooks` resources. Each change and its `admin_change` event are written in one
 * transaction (recorded-change.ts: the event reaches webhooks with the change, or neither happens). A secret is returned once, by the call
 * that made it, and kept sealed; a receiver's answer is never kept, only its status.
 */
import type { Clock } from '../clock.ts';
import type { AddressPolicy } from '../events/addresses.ts';
import { newEventId } from '../events/outbox-sink.ts';
import { newWebhookSecret } from '../events/signature.ts';
import type { WebhookEndpointRecord } from '../store/records.ts';
import type { DurableStore } from '../store/types.ts';
import { randomToken } from '../tokens/opaque.ts';
import type { Keyring } from '../tokens/secret-box.ts';
import { sealWebhookSecret } from '../tokens/webhook-secrets.ts';
import { AdminError, refuseOtherVersion, staleOrGone } from './errors.ts';
import { recordedChange as changed, type ChangeActor } from './recorded-change.ts';
import { normalEventTypes, refuseWebhookFields, resolveHost, type ResolveHost } from './webhook-rules.ts';
import { isWebhookId, toWebhookView, type WebhookView } from './webhook-view.ts';

export interface WebhookDeps {
  durable: DurableStore;
  /** The `webhook-secrets` keyring (services: `webhookKeyring`). */
  keyring: Keyring;
  /** services: `addressPolicy` (IDP_WEBHOOK_ALLOWED_NETWORKS, production or not). */
  policy: AddressPolicy;
  clock: Clock;
  /** Resolves a host name at creation and change (default: the system's resolver). */
  resolve?: ResolveHost;
}

/** A new endpoint (wire names). `event_types` defaults to `["*"]`, `enabled` to true. */
export interface WebhookInput {
  url: string;
  event_types?: readonly string[] | undefined;
  enabled?: boolean | undefined;
  description?: string | undefined;
}

export type WebhookChange = Partial<Omit<WebhookInput, 'url'> & { url: string }>;

/** A secret change keeps the old secret signing beside the new one this long. */
export const PREVIOUS_SECRET_SECONDS = 24 * 3600;

async function existing(durable: DurableStore, id: string, ifVersion?: number): Promise<WebhookEndpointRecord> {
  const endpoint = isWebhookId(id) ? await durable.webhooks.get(id) : undefined;
  if (!endpoint) throw new AdminError('not_found', `no webhook endpoint with id ${id}`);
  refuseOtherVersion(endpoint.version, ifVersion, `webhook endpoint ${id}`);
  return endpoint;
}

/**
 * A write that found no row (at `ifVersion`, when given) throws inside its transaction, so that
 * its event is not written either.
 */
async function written<T>(tx: DurableStore, id: string, result: T | undefined | false): Promise<T> {
  if (result !== undefined && result !== false) return result;
  if (await tx.webhooks.get(id)) throw staleOrGone(true, `webhook endpoint ${id}`);
  throw new AdminError('not_found', `no webhook endpoint with id ${id}`);
}

export async function createWebhook(deps: WebhookDeps, input: WebhookInput, actor: ChangeActor): Promise<{ endpoint: WebhookView; version: number; secret: string }> {
  await refuseWebhookFields({ url: input.url, eventTypes: input.event_types, description: input.description }, deps.policy, deps.resolve ?? resolveHost);
  const id = `ep_${randomToken(12)}`;
  const secret = newWebhookSecret();
  const fields = ['url', 'event_types', 'enabled', 'description', 'secret'];
  const result = await changed(deps, actor, `webhook endpoint ${id}`, async (tx) => ({
    result: await tx.webhooks.create({
      id, url: input.url, eventTypes: normalEventTypes(input.event_types), enabled: input.enabled ?? true,
      description: input.description ?? '', secretSealed: sealWebhookSecret(deps.keyring, id, secret),
    }),
    change: { action: 'create', resource: 'webhook', resource_id: id, fields },
  }));
  return { endpoint: toWebhookView(result), version: result.version, secret };
}

export async function listWebhooks(deps: Pick<WebhookDeps, 'durable'>): Promise<WebhookView[]> {
  return (await deps.durable.webhooks.list()).map(toWebhookView);
}

export async function getWebhook(deps: Pick<WebhookDeps, 'durable'>, id: string): Promise<WebhookView> {
  return toWebhookView(await existing(deps.durable, id));
}

/** The endpoint and its row version (the administration API's ETag). */
export async function getVersionedWebhook(deps: Pick<WebhookDeps, 'durable'>, id: string): Promise<{ endpoint: WebhookView; version: number }> {
  const endpoint = await existing(deps.durable, id);
  return { endpoint: toWebhookView(endpoint), version: endpoint.version };
}

/**
 * Enabling an endpoint the service disabled (410, failing) forgets why: its deliveries resume.
 * With `ifVersion` (the API's If-Match) only the endpoint at that version is changed.
 */
export async function updateWebhook(deps: WebhookDeps, id: string, change: WebhookChange, actor: ChangeActor, ifVersion?: number): Promise<{ endpoint: WebhookView; version: number }> {
  await existing(deps.durable, id, ifVersion);
  await refuseWebhookFields({ url: change.url, eventTypes: change.event_types, description: change.description }, deps.policy, deps.resolve ?? resolveHost);
  const fields = (['url', 'event_types', 'enabled', 'description'] as const).filter((name) => change[name] !== undefined);
  const result = await changed(deps, actor, `webhook endpoint ${id}`, async (tx) => ({
    result: await written(tx, id, await tx.webhooks.update(id, {
      url: change.url, enabled: change.enabled, description: change.description,
      eventTypes: change.event_types === undefined ? undefined : normalEventTypes(change.event_types),
    }, ifVersion)),
    change: { action: 'update', resource: 'webhook', resource_id: id, fields },
  }));
  return { endpoint: toWebhookView(result), version: result.version };
}

/** Its pending deliveries go with it. */
export async function removeWebhook(deps: WebhookDeps, id: string, actor: ChangeActor, ifVersion?: number): Promise<void> {
  if (!isWebhookId(id)) throw new AdminError('not_found', `no webhook endpoint with id ${id}`);
  await changed(deps, actor, `webhook endpoint ${id}`, async (tx) => ({
    result: await written(tx, id, await tx.webhooks.remove(id, ifVersion)),
    change: { action: 'delete', resource: 'webhook', resource_id: id, fields: [] },
  }));
}

/** A new secret; the one it replaces signs beside it for 24 hours (a secret older than that stops). */
export async function rotateWebhookSecret(deps: WebhookDeps, id: string, actor: ChangeActor, ifVersion?: number): Promise<{ endpoint: WebhookView; version: number; secret: string; previousValidUntil: Date }> {
  const current = await existing(deps.durable, id, ifVersion);
  const secret = newWebhookSecret();
  const previousValidUntil = new Date(deps.clock() + PREVIOUS_SECRET_SECONDS * 1000);
  const result = await changed(deps, actor, `webhook endpoint ${id}`, async (tx) => ({
    result: await written(tx, id, await tx.webhooks.update(id, {
      secretSealed: sealWebhookSecret(deps.keyring, id, secret), previousSecretSealed: current.secretSealed, previousSecretExpiresAt: previousValidUntil,
    }, ifVersion)),
    change: { action: 'update', resource: 'webhook', resource_id: id, fields: ['secret'] },
  }));
  return { endpoint: toWebhookView(result), version: result.version, secret, previousValidUntil };
}

/** Sends a `webhook.test` event to this endpoint alone (enabled or not); returns its id. */
export async function testWebhook(deps: Pick<WebhookDeps, 'durable' | 'clock'>, id: string): Promise<{ eventId: string }> {
  await existing(deps.durable, id);
  const eventId = newEventId();
  const written = await deps.durable.outbox.append({ id: eventId, type: 'webhook.test', occurredAt: new Date(deps.clock()), data: { endpoint_id: id } }, id);
  if (written === 0) throw new AdminError('not_found', `no webhook endpoint with id ${id}`);
  return { eventId };
}

export { countWebhookDeliveries, listWebhookDeliveries, redeliverWebhook } from './webhook-deliveries.ts';
export type { ChangeActor } from './recorded-change.ts';
