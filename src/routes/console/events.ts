/**
 * `/admin/events`: the audit log, newest first, a page at a time, filtered by type, user, client
 * and time. The filters are the API's query fields (`type`, `user_id`, `client_id`, `since`,
 * `until`), read by the API's one reading of them (src/admin/audit-log.ts): the same refusals,
 * beside the field. Empty fields of the form are no filter.
 */
import type { FastifyInstance } from 'fastify';
import { eventsPage, readEventFilter, type EventFilterInput } from '../../admin/audit-log.ts';
import { AUDIT_EVENT_TYPES } from '../../events/audit-events.ts';
import type { AuditLogEntry } from '../../store/contracts/audit-log.ts';
import type { ConsoleDeps } from './deps.ts';
import { consolePage } from './guard.ts';
import { listPageOf, nextPageQuery, pageRefusalOf } from './page-forms.ts';
import { renderConsole } from './render.ts';

const EVENTS_PER_PAGE = 50;
const FILTERS = ['type', 'user_id', 'client_id', 'since', 'until'] as const;

type FilterQuery = Partial<Record<(typeof FILTERS)[number], string | string[]>>;

/** The filters typed (empty ones dropped), as the query holds them. */
function typedFilters(query: Record<string, unknown>): FilterQuery {
  const typed: FilterQuery = {};
  for (const name of FILTERS) {
    const value = query[name];
    const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
    if (values.length > 0) typed[name] = name === 'type' && values.length > 1 ? values : values[0];
  }
  return typed;
}

/** An event's fields as the page lists them: each value as text (a list or an object as JSON). */
function eventRow(entry: AuditLogEntry) {
  const fields = Object.entries(entry.data).map(([name, value]) => ({ name, value: typeof value === 'string' ? value : JSON.stringify(value) }));
  return { id: entry.id, type: entry.type, occurredAt: entry.occurredAt.toISOString(), fields };
}

export function eventRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  app.get('/events', consolePage(deps, 'events', 'read', async (request, reply, admin) => {
    const query = request.query as Record<string, unknown>;
    const typed = typedFilters(query);
    const page = { title: 'Audit log', area: 'events' as const, types: AUDIT_EVENT_TYPES, typed };
    try {
      const filter = readEventFilter(typed as EventFilterInput);
      const events = await eventsPage(deps.admin.durable, filter, listPageOf(query, EVENTS_PER_PAGE));
      return await renderConsole(reply, deps, admin, 'console/events', {
        ...page, events: events.items.map(eventRow), next: nextPageQuery(events.next, typed), filtered: Object.keys(typed).length > 0,
      });
    } catch (error) {
      const refusal = pageRefusalOf(error);
      return renderConsole(reply, deps, admin, 'console/events', { ...page, refusal, events: [], filtered: true }, refusal.status);
    }
  }));
}
