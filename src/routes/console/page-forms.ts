/**
 * What the forms of the API scopes, signing keys, webhooks and audit log pages share: the posted
 * fields as the API's wire fields (a list is one value per line of its textarea), the row
 * version a form carries, the administrator as the actor of a change, an AdminError as the
 * refusal a page shows beside its field, and a list's page from the query (`cursor`).
 */
import type { FastifyRequest } from 'fastify';
import { AdminError } from '../../admin/errors.ts';
import { decodeCursor, encodeCursor } from '../../admin/pages.ts';
import type { ChangeActor } from '../../admin/recorded-change.ts';
import { consoleActor } from '../../console/actor.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import type { PageRequest } from '../../store/types.ts';
import type { ConsoleDeps } from './deps.ts';

export type PostedForm = Record<string, string | string[] | undefined>;

export const postedForm = (request: FastifyRequest): PostedForm => (request.body ?? {}) as PostedForm;

/** One value of a field (the first, when sent more than once); undefined when absent. */
export function postedText(form: PostedForm, name: string): string | undefined {
  const value = form[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A list field: each non-empty line of its textarea, trimmed. */
export function postedLines(form: PostedForm, name: string): string[] {
  const value = form[name];
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return values.flatMap((v) => v.split(/\r?\n/)).map((line) => line.trim()).filter((line) => line !== '');
}

/**
 * The row version the form was made from: a change over what a page showed needs it (a form
 * without one is not the console's).
 */
export function postedVersion(form: PostedForm): number {
  const value = postedText(form, 'version');
  if (value === undefined || !/^\d{1,15}$/.test(value)) throw new AdminError('invalid', 'the form carries no version of the row it shows: open the page again');
  return Number(value);
}

/** The administrator as the actor of a change: its events are logged on the request once it committed. */
export function changeActorOf(request: FastifyRequest, admin: ConsoleAdmin, deps: ConsoleDeps): ChangeActor {
  return consoleActor(admin.sub, (event) => deps.audit(request, event, { admin_sub: admin.sub }, { inOutbox: true }));
}

/** A refusal as a page shows it: its one line (role="alert") and each field's problems by field name. */
export interface PageRefusal {
  message: string;
  fields: Record<string, string[]>;
  /** The row changed since the form was made: the page shows the current values. */
  stale: boolean;
  notFound: boolean;
  /** The HTTP status of the page that shows it. */
  status: number;
}

const STALE_MESSAGE = 'Someone changed this since you opened it, so your change was not saved. The page now shows the current values: redo your change on them.';

/** An AdminError as a PageRefusal; any other error is not the form's to show, and is thrown again. */
export function pageRefusalOf(error: unknown): PageRefusal {
  if (!(error instanceof AdminError)) throw error;
  const fields: Record<string, string[]> = {};
  for (const problem of error.problems) (fields[String(problem.path[0] ?? '')] ??= []).push(problem.message);
  const stale = error.code === 'stale';
  const status = { stale: 409, conflict: 409, not_found: 404, invalid: 400, key_reused: 422 }[error.code];
  return { message: stale ? STALE_MESSAGE : error.message, fields, stale, notFound: error.code === 'not_found', status };
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
