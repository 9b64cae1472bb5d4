/**
 * Lists read a page at a time in key order (the store's keyset reads), and a cursor names where
 * the next page starts: the key of the last row given, so a page's cost does not grow with its
 * depth, and rows added or removed meanwhile neither shift nor repeat the others.
 */
import type { PageRequest } from '../store/types.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

export interface Page<T> {
  items: T[];
  /** The key to continue after; undefined on the last page. */
  next: string | undefined;
}

/** One row more than asked tells whether there is a next page without counting. */
export async function readPage<T>(read: (request: PageRequest) => Promise<T[]>, keyOf: (row: T) => string, request: PageRequest): Promise<Page<T>> {
  return pageFrom(await read({ after: request.after, limit: request.limit + 1 }), keyOf, request.limit);
}

/** The first `limit` rows, and whether more follow. */
function pageFrom<T>(rows: readonly T[], keyOf: (row: T) => string, limit: number): Page<T> {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last !== undefined ? keyOf(last) : undefined };
}

/** A page of rows held in memory already (the signing keys: a handful), by the same rule. */
export function pageOfList<T>(rows: readonly T[], keyOf: (row: T) => string, request: PageRequest): Page<T> {
  const sorted = [...rows].sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  const after = request.after;
  const rest = after === undefined ? sorted : sorted.filter((row) => keyOf(row) > after);
  return pageFrom(rest, keyOf, request.limit);
}

const CURSOR_PREFIX = 'k1:';

/** The opaque cursor of a key: callers pass it back and never read it. */
export function encodeCursor(key: string): string {
  return Buffer.from(`${CURSOR_PREFIX}${key}`, 'utf8').toString('base64url');
}

/** The key of a cursor made by encodeCursor; undefined for anything else. */
export function decodeCursor(cursor: string): string | undefined {
  if (!/^[A-Za-z0-9_-]{1,1400}$/.test(cursor)) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(CURSOR_PREFIX) || text.includes('\u0000') || text.includes('\uFFFD')) return undefined;
  return text.slice(CURSOR_PREFIX.length);
}
