/**
 * What a command prints: one JSON document with `--json` (wire names, snake_case), otherwise
 * lines of text for a person: aligned tables and `field: value` lists.
 */
import type { CliContext } from './context.ts';

/** Prints `document` as JSON when --json was given, else the lines of `text()`. */
export function report(context: CliContext, document: unknown, text: () => string[]): void {
  if (context.json) {
    context.out(JSON.stringify(document, null, 2));
    return;
  }
  for (const line of text()) context.out(line);
}

/** An aligned text table with a header row; `empty` when there are no rows. */
export function formatTable(headers: string[], rows: string[][], empty: string): string[] {
  if (rows.length === 0) return [empty];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** `field: value` lines with the values aligned. */
export function formatFields(fields: [string, string][]): string[] {
  const width = Math.max(...fields.map(([name]) => name.length));
  return fields.map(([name, value]) => `${`${name}:`.padEnd(width + 2)}${value}`);
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
