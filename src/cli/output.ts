/**
 * What a command prints: one JSON document with `--json` (wire names, snake_case), otherwise
 * lines of text for a person: aligned tables and `field: value` lists. A stored value may hold
 * control characters (a row written by SQL, an old record): they are printed escaped, never
 * sent to the terminal (JSON.stringify escapes C0 controls itself; C1 and bidi controls too, here).
 */
import { escapeControlCharacters, escapeJsonControlCharacters } from '../control-characters.ts';
import type { CliContext } from './context.ts';

/** Prints `document` as JSON when --json was given, else the lines of `text()`. */
export function report(context: CliContext, document: unknown, text: () => string[]): void {
  if (context.json) {
    context.out(escapeJsonControlCharacters(JSON.stringify(document, null, 2)));
    return;
  }
  for (const line of text()) context.out(escapeControlCharacters(line));
}

/** An aligned text table with a header row; `empty` when there are no rows. */
export function formatTable(headers: string[], rawRows: string[][], empty: string): string[] {
  if (rawRows.length === 0) return [empty];
  // Escaped before measuring, so that a cell's escape sequence does not break the columns.
  const rows = rawRows.map((row) => row.map((cell) => escapeControlCharacters(cell)));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** `field: value` lines with the values aligned. */
export function formatFields(rawFields: [string, string][]): string[] {
  const fields = rawFields.map(([name, value]) => [name, escapeControlCharacters(value)] as const);
  const width = Math.max(...fields.map(([name]) => name.length));
  // A field of several lines names itself on the first only (the others have no name).
  return fields.map(([name, value]) => `${(name === '' ? '' : `${name}:`).padEnd(width + 2)}${value}`);
}

export function yesNo(value: boolean): string {
  return value ? 'yes' : 'no';
}

/** A list for a table cell or a field; `-` when empty. */
export function listText(values: readonly string[]): string {
  return values.length === 0 ? '-' : values.join(' ');
}

export function timeText(value: Date | null): string {
  return value ? value.toISOString() : '-';
}
