/** The query of every list (`limit`, `cursor`, `count`) and the answer of a page (`items`, `next_cursor`, `total`, Link). */
import { z } from 'zod';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, decodeCursor, encodeCursor, type Page } from '../../admin/keyset.ts';
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
  count: z.enum(['true', 'false']).optional().describe('true: the answer also holds `total`, the number of items of every page together (counting costs what reading them all would).'),
};

export const pageQuery = z.strictObject(pageQueryFields);

/** The page request of a list's query. */
export function pageRequest(query: { limit?: number | undefined; cursor?: string | undefined }) {
  return { after: query.cursor, limit: query.limit ?? DEFAULT_PAGE_SIZE };
}

/** The total of a list when the query asks for it (`count=true`), else undefined. */
export async function totalIfAsked(query: { count?: 'true' | 'false' | undefined }, count: () => Promise<number> | number): Promise<number | undefined> {
  return query.count === 'true' ? count() : undefined;
}

/**
 * `{items, next_cursor}` (with `total` when counted), and the next page's query for the Link
 * header while there is more: the list's own filters, `limit` and the cursor.
 */
export function pageAnswer<T>(page: Page<T>, document: (row: T) => unknown, request: { limit: number; filters?: Record<string, string | undefined>; total?: number | undefined }): Answer {
  const next = page.next === undefined ? null : encodeCursor(page.next);
  const filters = Object.fromEntries(Object.entries(request.filters ?? {}).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return {
    status: 200,
    body: { items: page.items.map(document), next_cursor: next, ...(request.total === undefined ? {} : { total: request.total }) },
    next: next === null ? undefined : { ...filters, limit: String(request.limit), cursor: next },
  };
}

/** A plain list (`GET` with `limit` and `cursor`): the page `read` gives, each row as `document` makes it. */
export function listOperation<T>(spec: {
  path: string; operationId: string; summary: string; area?: AdminArea;
  read: (deps: AdminApiDeps, request: PageRequest) => Promise<Page<T>> | Page<T>;
  /** How many items all pages hold (for `count=true`). */
  count: (deps: AdminApiDeps) => Promise<number> | number;
  document: (row: T) => unknown;
  /** The schema of its page (answer-schemas.ts). */
  page: z.ZodType;
}): Operation {
  return operation<undefined, z.output<typeof pageQuery>>({
    method: 'GET', path: spec.path, operationId: spec.operationId, summary: spec.summary, query: pageQuery, ...(spec.area ? { area: spec.area } : {}),
    responses: { 200: { description: 'A page: {items, next_cursor}, and total with count=true', body: spec.page } },
    handle: async ({ deps, query }) => {
      const request = pageRequest(query);
      const page = await spec.read(deps, request);
      return pageAnswer(page, spec.document, { limit: request.limit, total: await totalIfAsked(query, () => spec.count(deps)) });
    },
  });
}

