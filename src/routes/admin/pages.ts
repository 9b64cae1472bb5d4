/** The query of every list (`limit`, `cursor`) and the answer of a page (`items`, `next_cursor`, Link). */
import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, decodeCursor, encodeCursor, type Page } from '../../admin/pages.ts';
import type { AdminArea } from '../../admin/api-access.ts';
import type { PageRequest } from '../../store/types.ts';
import type { AdminApiDeps } from './deps.ts';
import { operation, type Answer, type Operation } from './operation.ts';

const LIMIT_RULE = `must be a whole number from 1 to ${MAX_PAGE_SIZE}`;

export const pageQueryFields = {
  limit: z.string().regex(/^\d{1,4}$/, LIMIT_RULE).transform(Number).pipe(z.number().min(1, LIMIT_RULE).max(MAX_PAGE_SIZE, LIMIT_RULE))
    .optional().describe(`Items per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`),
  cursor: z.string().transform((cursor, ctx) => {
    const key = decodeCursor(cursor);
    if (key === undefined) ctx.addIssue({ code: 'custom', message: 'is not a cursor this API gave (pass next_cursor back as it is)' });
    return key ?? '';
  }).optional().describe('The next_cursor of the previous page.'),
};

export const pageQuery = z.strictObject(pageQueryFields);

/** The page request of a list's query. */
export function pageRequest(query: { limit?: number | undefined; cursor?: string | undefined }) {
  return { after: query.cursor, limit: query.limit ?? DEFAULT_PAGE_SIZE };
}

/** `{items, next_cursor}`, and the next page's query for the Link header while there is more. */
export function pageAnswer<T>(page: Page<T>, document: (row: T) => unknown, limit: number, filters: Record<string, string> = {}): Answer {
  const next = page.next === undefined ? null : encodeCursor(page.next);
  return {
    status: 200,
    body: { items: page.items.map(document), next_cursor: next },
    next: next === null ? undefined : { ...filters, limit: String(limit), cursor: next },
  };
}

/** A plain list (`GET` with `limit` and `cursor`): the page `read` gives, each row as `document` makes it. */
export function listOperation<T>(spec: {
  path: string; operationId: string; summary: string; area?: AdminArea;
  read: (deps: AdminApiDeps, request: PageRequest) => Promise<Page<T>> | Page<T>;
  document: (row: T) => unknown;
  /** The schema of its page (wire-schemas.ts). */
  page: z.ZodType;
}): Operation {
  return operation<undefined, z.output<typeof pageQuery>>({
    method: 'GET', path: spec.path, operationId: spec.operationId, summary: spec.summary, query: pageQuery, ...(spec.area ? { area: spec.area } : {}),
    responses: { 200: { description: 'A page: {items, next_cursor}', body: spec.page } },
    handle: async ({ deps, query }) => {
      const request = pageRequest(query);
      return pageAnswer(await spec.read(deps, request), spec.document, request.limit);
    },
  });
}
