/** An endpoint's delivery log (its attempts, newest first, a page at a time) and redelivery of one delivery. */
import type { DurableStore, PageRequest } from '../store/types.ts';
import { AdminError } from './errors.ts';
import { DEFAULT_PAGE_SIZE, readPage, type Page } from './keyset.ts';
import { isDeliveryId, isWebhookId, toAttemptView, type DeliveryAttemptView } from './webhook-view.ts';

/** A key of the log (webhook-deliveries' `key`: micros.delivery.attempt): anything else is no cursor of ours. */
const ATTEMPT_KEY = /^(\d{1,19})\.(\d{1,18})\.(\d{1,10})$/;
/** The columns' ranges (bigint, bigint, int): a number past them is no cursor either, not a database error. */
const KEY_LIMITS = [2n ** 63n - 1n, 2n ** 63n - 1n, 2n ** 31n - 1n];

function isAttemptKey(text: string): boolean {
  const parts = ATTEMPT_KEY.exec(text)?.slice(1);
  return parts !== undefined && parts.every((part, i) => BigInt(part) <= (KEY_LIMITS[i] ?? 0n));
}

/** A page of an endpoint's delivery log, newest attempt first. */
export async function listWebhookDeliveries(deps: { durable: DurableStore }, id: string, request: PageRequest = { after: undefined, limit: DEFAULT_PAGE_SIZE }): Promise<Page<DeliveryAttemptView>> {
  if (!isWebhookId(id) || !(await deps.durable.webhooks.get(id))) throw new AdminError('not_found', `no webhook endpoint with id ${id}`);
  if (request.after !== undefined && !isAttemptKey(request.after)) {
    throw new AdminError('invalid', 'cursor is not one this list gave', [{ path: ['cursor'], message: 'is not a cursor this list gave (pass next_cursor back as it is)' }]);
  }
  const page = await readPage((r) => deps.durable.webhooks.attempts(id, r.limit, r.after), (attempt) => attempt.key, request);
  return { items: page.items.map(toAttemptView), next: page.next };
}

/** How many attempts the endpoint's delivery log holds (every page of it). */
export function countWebhookDeliveries(deps: { durable: DurableStore }, id: string): Promise<number> {
  return deps.durable.webhooks.countAttempts(id);
}

/** Makes the delivery due now, at the start of the retry schedule (whatever its state). */
export async function redeliverWebhook(deps: { durable: DurableStore }, id: string, deliveryId: string): Promise<{ deliveryId: string }> {
  if (!isWebhookId(id) || !isDeliveryId(deliveryId) || !(await deps.durable.webhooks.redeliver(id, deliveryId))) throw new AdminError('not_found', `no delivery ${deliveryId} of webhook endpoint ${id}`);
  return { deliveryId };
}
