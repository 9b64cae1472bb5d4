/**
 * The audit log as administrators read it (`GET /admin/v1/events`, `idp events`, the console):
 * one reading of the filters and one page of events, newest first. The filters are a zod schema
 * of wire names, which the API's query and the command line's flags are both read with.
 */
import { z } from 'zod';
import type { AuditLogCursor, AuditLogEntry, AuditLogFilter } from '../store/contracts/audit-log.ts';
import type { DurableStore, PageRequest } from '../store/types.ts';
import { AdminError } from './errors.ts';
import { readPage, type Page } from './pages.ts';
import { parseWire } from './seed-schema.ts';

const RFC_3339 = 'must be an RFC 3339 date and time with a time zone (2026-11-29T10:00:00Z)';
const instant = z.string().refine((text) => z.iso.datetime({ offset: true }).safeParse(text.toUpperCase()).success, RFC_3339)
  .transform((text) => new Date(text.toUpperCase()));
const words = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');

/** The filters by wire name: `type` may repeat (any of them), the others are one value each. */
export const eventFilterFields = {
  type: z.union([words, z.array(words).max(50, 'may be given at most 50 times')]).transform((value) => (Array.isArray(value) ? value : [value]))
    .optional().describe('Only events of this type; repeat it for any of several types.'),
  user_id: words.optional().describe('Only events about this user (their sub): the event\'s user_id, or the user an administrative change names.'),
  client_id: words.optional().describe('Only events of this client (for a change by this API, the calling client).'),
  since: instant.optional().describe('Only events at or after this time (RFC 3339).'),
  until: instant.optional().describe('Only events before this time (RFC 3339).'),
};

export const eventFilterSchema = z.strictObject(eventFilterFields);
export type EventFilterInput = z.input<typeof eventFilterSchema>;
export type EventFilter = z.output<typeof eventFilterSchema>;

/** The store's filter of what the schema read. */
export function auditLogFilter(filter: EventFilter): AuditLogFilter {
  return { types: filter.type, userId: filter.user_id, clientId: filter.client_id, since: filter.since, until: filter.until };
}

/** A page's key: the event's time in microseconds and its id (an id may hold any character). */
const keyOf = (entry: AuditLogEntry) => `${entry.cursor.micros}.${entry.cursor.id}`;

function cursorOf(key: string): AuditLogCursor {
  const match = /^(-?\d{1,18})\.(.+)$/s.exec(key);
  if (!match?.[1] || !match[2]) throw new AdminError('invalid', 'cursor is not one this list gave', [{ path: ['cursor'], message: 'is not a cursor this list gave (pass next_cursor back as it is)' }]);
  return { micros: match[1], id: match[2] };
}

/** A page of the log, newest first, after the key `request.after` (a page's `next`). */
export async function eventsPage(durable: Pick<DurableStore, 'auditLog'>, filter: EventFilter, request: PageRequest): Promise<Page<AuditLogEntry>> {
  const cursor = request.after === undefined ? undefined : cursorOf(request.after);
  const query = auditLogFilter(filter);
  return readPage((r) => durable.auditLog.list({ ...query, limit: r.limit, cursor }), keyOf, request);
}

/** How many events match (every page together). */
export function countEvents(durable: Pick<DurableStore, 'auditLog'>, filter: EventFilter): Promise<number> {
  return durable.auditLog.count(auditLogFilter(filter));
}

/** An event as the API answers it and `idp events --json` prints it. */
export function eventDocument(entry: AuditLogEntry) {
  return { id: entry.id, type: entry.type, occurred_at: entry.occurredAt.toISOString(), data: entry.data };
}

/** The filters of the command line's flags (wire names), read as the API reads its query: an AdminError names each malformed one. */
export function readEventFilter(input: EventFilterInput): EventFilter {
  return parseWire(eventFilterSchema, input, 'events');
}
