/**
 * What an import reads from a file, whatever the provider: entries in the seed file's shape
 * (src/admin/input-schemas.ts) with where each came from, so a refusal names the record and the
 * field as the provider's file spells them.
 */
import type { FieldPath } from '../errors.ts';
import type { SeedClient, SeedUser } from '../input-schemas.ts';

/** Where a record is in its file: a JSON pointer (`/users/3`) or a line of a JSON-lines file. */
export interface RecordLocation {
  /** `/users/3`, or `line 4`. */
  at: string;
  /** What the record is called in the report (a username, a client id), once known. */
  name: string;
}

/** A problem with one field of a record: `field` is a JSON pointer within the record ('' for the whole). */
export interface EntryProblem {
  field: string;
  message: string;
}

interface EntryBase extends RecordLocation {
  /** Problems found while reading the provider's record (before the seed's rules run). */
  problems: EntryProblem[];
  /** The pointer within the record of each seed field the entry was made from (`given_name` -> `/firstName`). */
  origin: Partial<Record<string, string>>;
  /** What the import left out of the record and why (an OTP credential the service cannot use). */
  notes: string[];
}

export type ImportEntry =
  | (EntryBase & { type: 'user'; user: Record<string, unknown>; subject: string | undefined })
  | (EntryBase & { type: 'client'; client: Record<string, unknown> })
  | (EntryBase & { type: 'api_scope'; scope: unknown })
  /** A record the import leaves alone on purpose (a provider's built-in client). */
  | (EntryBase & { type: 'skip'; kind: 'user' | 'client'; reason: string });

/** A user or client entry once the seed's schema accepted it. */
export type CheckedEntry =
  | { type: 'user'; entry: ImportEntry & { type: 'user' }; user: SeedUser }
  | { type: 'client'; entry: ImportEntry & { type: 'client' }; client: SeedClient };

/** JSON pointer escaping (RFC 6901 §3). */
export const pointerOf = (path: readonly (string | number)[]): string => path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/** The pointer within the record of a seed field's problem, through the entry's origin. */
export function fieldPointer(entry: EntryBase, path: FieldPath): string {
  const [first, ...rest] = path;
  const origin = first === undefined ? undefined : entry.origin[String(first)];
  return origin === undefined ? pointerOf(path) : `${origin}${pointerOf(rest)}`;
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A string field of a record, or undefined (a wrong type is the seed schema's to name). */
export const stringField = (record: Record<string, unknown>, key: string): string | undefined => (typeof record[key] === 'string' ? record[key] : undefined);

/** Copies the fields present in `record` to their seed names: `{ firstName: 'given_name' }`. */
export function renamed(record: Record<string, unknown>, names: Record<string, string>): { fields: Record<string, unknown>; origin: Record<string, string> } {
  const fields: Record<string, unknown> = {};
  const origin: Record<string, string> = {};
  for (const [from, to] of Object.entries(names)) {
    if (record[from] === undefined) continue;
    fields[to] = record[from];
    origin[to] = pointerOf([from]);
  }
  return { fields, origin };
}
