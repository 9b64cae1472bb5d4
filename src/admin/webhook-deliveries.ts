/** An endpoint's delivery log (its recent attempts) and redelivery of one delivery. */
import type { DurableStore } from '../store/types.ts';
import { AdminError } from './errors.ts';
import { isDeliveryId, isWebhookId, toAttemptView, type DeliveryAttemptView } from './webhook-view.ts';

export const MAX_DELIVERIES_LISTED = 200;

export async function listWebhookDeliveries(deps: { durable: DurableStore }, id: string, limit = 50): Promise<DeliveryAttemptView[]> {
  if (!isWebhookId(id) || !(await deps.durable.webhooks.get(id))) throw new AdminError('not_found', `no webhook endpoint with id ${id}`);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DELIVERIES_LISTED) {
    throw new AdminError('invalid', `limit must be a whole number from 1 to ${MAX_DELIVERIES_LISTED}`, [{ path: ['limit'], message: `must be from 1 to ${MAX_DELIVERIES_LISTED}` }]);
  }
  return (await deps.durable.webhooks.attempts(id, limit)).map(toAttemptView);
}

/** Makes the delivery due now, at the start of the retry schedule (whatever its state). */
export async function redeliverWebhook(deps: { durable: DurableStore }, id: string, deliveryId: string): Promise<{ deliveryId: string }> {
  if (!isWebhookId(id) || !isDeliveryId(deliveryId) || !(await deps.durable.webhooks.redeliver(id, deliveryId))) throw new AdminError('not_found', `no delivery ${deliveryId} of webhook endpoint ${id}`);
  return { deliveryId };
}
