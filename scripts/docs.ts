/**
 * Writes the generated parts of the docs/ references (scripts/docs-references.ts): run it after
 * changing a command's usage text or an operation of the Administration API, and commit the pages.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GENERATED_PARTS, withGeneratedPart } from './docs-references.ts';

const ROOT = join(import.meta.dirname, '..');

for (const part of GENERATED_PARTS) {
  const path = join(ROOT, part.file);
  const before = readFileSync(path, 'utf8');
  const after = withGeneratedPart(before, part.text());
  if (after !== before) writeFileSync(path, after);
  process.stdout.write(`${part.file}: ${after === before ? 'unchanged' : 'written'}\n`);
}
