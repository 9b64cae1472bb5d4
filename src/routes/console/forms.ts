/**
 * What every console form shares: reading the posted fields as the API's wire fields (a list is
 * one value per line of a textarea of that name; a checkbox sends "true" or nothing), the row
 * version it carries, the administrator as the change's actor, and an AdminError's field
 * problems by field name, to show beside each field.
 */
import type { FastifyRequest } from 'fastify';
import { AdminError, formatPath } from '../../admin/errors.ts';
import type { ChangeActor } from '../../admin/recorded-change.ts';
import { consoleActor } from '../../console/actor.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import { requestContext } from '../shared/audit.ts';
import type { ConsoleDeps } from './deps.ts';

export type FormBody = Record<string, string | string[] | undefined>;

export const formOf = (request: FastifyRequest): FormBody => (request.body ?? {}) as FormBody;

/** One value of a field (the first, if it was sent more than once); undefined when absent. */
export function textOf(form: FormBody, name: string): string | undefined {
  const value = form[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A list field: each non-empty line of its textarea (or each value, when sent as several fields), trimmed. */
export function linesOf(form: FormBody, name: string): string[] {
  const value = form[name];
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return values.flatMap((v) => v.split(/\r?\n/)).map((line) => line.trim()).filter((line) => line !== '');
}

/** A checkbox: checked when sent with any value but "false". */
export const checked = (form: FormBody, name: string) => {
  const value = textOf(form, name);
  return value !== undefined && value !== 'false';
};

/** A whole number as the API takes it; anything else is passed on as typed, for the rules to refuse. */
export function numberOf(form: FormBody, name: string): number | string | undefined {
  const value = textOf(form, name)?.trim();
  if (value === undefined || value === '') return undefined;
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

/** The row version the form was made from (its hidden `version`); undefined when absent or not a number. */
export function versionOf(form: FormBody): number | undefined {
  const value = textOf(form, 'version');
  return value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/** The administrator as the actor of a change: its events are logged on the request, once it committed. */
export function actorOf(request: FastifyRequest, admin: ConsoleAdmin, deps: ConsoleDeps): ChangeActor {
  return consoleActor(admin.sub, (event) => deps.audit(request, event, {}, { inOutbox: true }), requestContext(request));
}

/** A refusal as a page shows it: the one line (in role="alert") and each field's problems beside it, by field name. */
export interface Refusal {
  message: string;
  fields: Record<string, string[]>;
  /** The row changed since the form was made: the page shows the current values. */
  stale: boolean;
  notFound: boolean;
}

/** An AdminError as a Refusal; any other error is not the form's to show, and is thrown again. */
export function refusalOf(error: unknown): Refusal {
  if (!(error instanceof AdminError)) throw error;
  const fields: Record<string, string[]> = {};
  for (const problem of error.problems) {
    const name = String(problem.path[0] ?? '');
    const where = problem.path.length > 1 ? `${formatPath(problem.path)}: ` : '';
    (fields[name] ??= []).push(`${where}${problem.message}`);
  }
  const stale = error.code === 'stale';
  return {
    message: stale ? 'Someone changed this since you opened it, so your change was not saved. The page now shows the current values: redo your change on them.' : error.message,
    fields,
    stale,
    notFound: error.code === 'not_found',
  };
}
