/**
 * docs/reference/configuration.md cannot drift from the configuration schema: its table has a row
 * for every variable the schema reads and for nothing else, and each default the schema gives
 * (a number or a word) is the one the row says.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { envSchema } from '../../src/config/environment.ts';
import { ROOT } from '../helpers/process.ts';

const PAGE = 'docs/reference/configuration.md';

interface Row {
  variables: string[];
  defaults: string;
}

/** The rows of the page's table of variables: the backticked names of the first cell, and the second cell. */
function documentedRows(): Row[] {
  const text = readFileSync(join(ROOT, PAGE), 'utf8');
  const table = text.slice(text.indexOf('\n| variable | default | meaning |'));
  const lines = table.split('\n').slice(1).filter((line, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('|')));
  return lines.slice(2).map((line) => {
    // A cell may hold an escaped pipe (`\|`): split only on the others.
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.replace(/\\\|/g, '|').trim());
    return { variables: [...(cells[1] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] as string), defaults: cells[2] ?? '' };
  });
}

/** What the schema makes of a variable left unset, when it is a value a reader types (a number or a word). */
function schemaDefault(variable: string): string | undefined {
  const field = (envSchema.shape as Record<string, z.ZodType | undefined>)[variable];
  const parsed = field?.safeParse(undefined);
  if (parsed === undefined) return undefined;
  if (!parsed.success) return undefined;
  return typeof parsed.data === 'number' || typeof parsed.data === 'string' ? String(parsed.data) : undefined;
}

describe(PAGE, () => {
  const rows = documentedRows();
  const documented = rows.flatMap((row) => row.variables);

  it('has one row for each variable of the configuration schema, and none for another', () => {
    expect(rows.length).toBeGreaterThan(10);
    expect(new Set(documented).size, 'a variable is documented twice').toBe(documented.length);
    const schema = Object.keys(envSchema.shape);
    const missing = schema.filter((variable) => !documented.includes(variable));
    const unknown = documented.filter((variable) => !schema.includes(variable));
    expect(missing, `add a row to ${PAGE} for each`).toStrictEqual([]);
    expect(unknown, `no such variable in src/config/environment.ts: remove the row from ${PAGE}`).toStrictEqual([]);
  });

  it('gives each variable the default the schema gives it', () => {
    const wrong = rows.flatMap((row) => row.variables.flatMap((variable) => {
      const value = schemaDefault(variable);
      return value === undefined || row.defaults.includes(`\`${value}\``) ? [] : [`${variable}: the schema's default is ${value}, the row says ${row.defaults}`];
    }));
    expect(wrong).toStrictEqual([]);
  });
});
