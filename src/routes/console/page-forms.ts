/**
 * What the API scopes, signing keys, webhooks and audit log pages add to forms.ts: the row
 * version a change needs, a refusal with the status of its page, and a list's page from the
 * query (`cursor`) and the query of the next one.
 */
import { AdminError, type AdminErrorCode } from '../../admin/errors.ts';
import { decodeCursor, encodeCursor } from '../../admin/keyset.ts';
import type { PageRequest } from '../../store/types.ts';
import { refusalOf, versionOf, type FormBody, type Refusal } from './forms.ts';

/**
 * The row version the form was made from: a change over what a page showed needs it (a form
 * without one is not the console's).
 */
export function requiredVersionOf(form: FormBody): number {
  const version = versionOf(form);
  if (version === undefined) throw new AdminError('invalid', 'the form carries no version of the row it shows: open the page again');
  return version;
}

/** A refusal as a page shows it (forms.ts), with the status of the page that shows it. */
export interface PageRefusal extends Refusal {
  status: number;
}

const STATUS_OF: Record<AdminErrorCode, number> = { stale: 409, conflict: 409, not_found: 404, invalid: 400, key_reused: 422 };

/** An AdminError as a PageRefusal; any other error is not the form's to show, and is thrown again. */
export function pageRefusalOf(error: unknown): PageRefusal {
  const refusal = refusalOf(error);
  return { ...refusal, status: STATUS_OF[(error as AdminError).code] };
}

/** A page of a console list: `?cursor=` as the API's cursor; a cursor not of ours starts at the top. */
export function listPageOf(query: Record<string, unknown>, limit: number): PageRequest {
  const cursor = typeof query.cursor === 'string' ? decodeCursor(query.cursor) : undefined;
  return { after: cursor, limit };
}

/** The query string of a list's next page (with `keep`, the filters it was read with), or undefined on the last page. */
export function nextPageQuery(next: string | undefined, keep: Record<string, string | readonly string[] | undefined> = {}): string | undefined {
  if (next === undefined) return undefined;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(keep)) {
    for (const one of value === undefined ? [] : typeof value === 'string' ? [value] : value) if (one !== '') query.append(name, one);
  }
  query.set('cursor', encodeCursor(next));
  return query.toString();
}
