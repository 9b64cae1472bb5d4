/**
 * The administrative layer's field problems as the command line names them: the first value
 * not of its field's form (a path such as `redirect_uris/1`) becomes one usage line naming the
 * flag that gave it and the value typed. The rules themselves live in src/admin/ only.
 */
import { AdminError } from '../admin/errors.ts';
import { UsageError } from './context.ts';

/** The flag of each wire field a command takes (`redirect_uris` -> `redirect-uri`). */
export type FlagNames = Readonly<Record<string, string>>;

/** Runs an administrative operation on `input` (wire names); a malformed field becomes a UsageError naming its flag. */
export async function namingFlags<T>(flags: FlagNames, input: object, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw flagError(error, flags, input);
  }
}

function flagError(error: unknown, flags: FlagNames, input: object): unknown {
  if (!(error instanceof AdminError)) return error;
  for (const { path: [field, index], message, malformed } of error.problems) {
    const flag = typeof field === 'string' ? flags[field] : undefined;
    if (!malformed || flag === undefined) continue;
    const given = (input as Record<string, unknown>)[field as string];
    const value = typeof index === 'number' && Array.isArray(given) ? given[index] : given;
    return new UsageError(`--${flag} "${String(value)}": ${message}`);
  }
  return error;
}

/** A whole number of seconds as typed, else the text itself (for the admin layer to name as wrong). */
export function secondsOf(text: string | undefined): number | string | undefined {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : text;
}
