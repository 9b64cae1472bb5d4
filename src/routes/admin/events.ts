/** `/events`: the audit log, newest first, a page at a time, filtered by type, user, client and time. */
import { z } from 'zod';
import { countEvents, eventDocument, eventFilterFields, eventsPage, type EventFilter } from '../../admin/audit-log.ts';
import { auditEventPageWire } from '../../admin/wire-schemas.ts';
import { operation, type Operation } from './operation.ts';
import { pageAnswer, pageQueryFields, pageRequest, totalIfAsked } from './pages.ts';

const listQuery = z.strictObject({ ...pageQueryFields, ...eventFilterFields });

/** The filters as the next page's link repeats them (`type` once per value). */
function filterParameters(filter: EventFilter): Array<[string, string]> {
  const pairs = (name: string, values: ReadonlyArray<string | Date | undefined>) => values.flatMap((v): Array<[string, string]> => (v === undefined ? [] : [[name, v instanceof Date ? v.toISOString() : v]]));
  return [...pairs('type', filter.type ?? []), ...pairs('user_id', [filter.user_id]), ...pairs('client_id', [filter.client_id]), ...pairs('since', [filter.since]), ...pairs('until', [filter.until])];
}

export const EVENT_OPERATIONS: Operation[] = [
  operation<undefined, z.output<typeof listQuery>>({
    method: 'GET', path: '/events', operationId: 'listEvents', summary: 'The audit log, newest first; by type, user, client and time', query: listQuery,
    responses: { 200: { description: 'A page of events (total with count=true)', body: auditEventPageWire } },
    handle: async ({ deps, query }) => {
      const request = pageRequest(query);
      const page = await eventsPage(deps.durable, query, request);
      const answer = pageAnswer(page, eventDocument, { limit: request.limit, total: await totalIfAsked(query, () => countEvents(deps.durable, query)) });
      return answer.next && !Array.isArray(answer.next) ? { ...answer, next: [...filterParameters(query), ...Object.entries(answer.next)] } : answer;
    },
  }),
];
