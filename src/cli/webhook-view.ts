/** How `idp webhooks` prints endpoints and attempts (never a secret; an attempt's status or error kind only). */
import type { DeliveryAttemptView, WebhookView } from '../admin/webhook-view.ts';
import { formatFields, listText, yesNo } from './output.ts';

export const WEBHOOK_HEADERS = ['ID', 'URL', 'EVENTS', 'ENABLED'];

export function webhookRow(endpoint: WebhookView): string[] {
  const enabled = endpoint.enabled ? 'yes' : endpoint.disabled_reason ? `no (${endpoint.disabled_reason})` : 'no';
  return [endpoint.id, endpoint.url, listText(endpoint.event_types), enabled];
}

export function webhookLines(endpoint: WebhookView): string[] {
  return formatFields([
    ['id', endpoint.id],
    ['url', endpoint.url],
    ['event_types', listText(endpoint.event_types)],
    ['enabled', yesNo(endpoint.enabled)],
    ['disabled_reason', endpoint.disabled_reason ?? '-'],
    ['failing_since', endpoint.failing_since ?? '-'],
    ['description', endpoint.description || '-'],
    ['previous_secret_expires_at', endpoint.previous_secret_expires_at ?? '-'],
    ['created_at', endpoint.created_at],
    ['updated_at', endpoint.updated_at],
  ]);
}

export const ATTEMPT_HEADERS = ['DELIVERY', 'EVENT', 'TYPE', 'ATTEMPT', 'STARTED', 'RESULT', 'MS', 'STATE', 'NEXT'];

export function attemptRows(attempts: readonly DeliveryAttemptView[]): string[][] {
  return attempts.map((a) => [
    a.delivery_id, a.event_id, a.event_type, String(a.attempt), a.started_at,
    a.error === null ? String(a.status ?? 'in flight') : a.status === null ? a.error : `${a.error} ${a.status}`,
    a.duration_ms === null ? '-' : String(a.duration_ms), a.delivery_state, a.next_attempt_at ?? '-',
  ]);
}
