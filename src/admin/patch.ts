/**
 * The rule of every change to a stored record (`idp users update`, `idp clients update`, a seed
 * file's entry for a record that exists, later the API's PATCH): a field the change leaves out
 * keeps its stored value, `null` clears it, a value sets it.
 */

/** A field: left out, it keeps the stored value. */
export const kept = <T>(stored: T, given: T | undefined): T => (given === undefined ? stored : given);

/** A list: left out, it keeps the stored list; `null` clears it to `[]`; given, it is set without repeats. */
export const keptList = (stored: readonly string[], given: readonly string[] | null | undefined): string[] =>
  given === undefined ? [...stored] : given === null ? [] : [...new Set(given)];

/** Whether a field's value after a change is the one stored (instants compared as instants). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  return JSON.stringify(a) === JSON.stringify(b);
}
