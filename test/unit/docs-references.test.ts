/**
 * The generated parts of docs/reference/ (scripts/docs-references.ts) are what the code makes
 * today: each command's usage text, and the operations of the Administration API's OpenAPI
 * document. A change to either fails here with the command that writes the pages again. The
 * Administration API guide's table of resources names only paths the document has.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/routes/admin/openapi.ts';
import { ADMIN_OPERATIONS } from '../../src/routes/admin/operations.ts';
import { GENERATED_PARTS, MARKERS, REGENERATE, withGeneratedPart } from '../../scripts/docs-references.ts';
import { ROOT } from '../helpers/process.ts';

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('the generated references', () => {
  it.each(GENERATED_PARTS.map((part) => [part.file, part] as const))('%s is what the code makes', (file, part) => {
    const page = read(file);
    expect(page).toContain(MARKERS.BEGIN);
    expect(page === withGeneratedPart(page, part.text()), `${file} is out of date: run \`${REGENERATE}\` and commit it`).toBe(true);
  });

  it('holds every command family and every operation', () => {
    const commands = read('docs/reference/command-line.md');
    for (const family of ['serve', 'clients', 'users', 'webhooks', 'doctor']) expect(commands).toContain(`### idp ${family}\n`);
    const operations = read('docs/reference/admin-api.md');
    for (const op of ADMIN_OPERATIONS) expect(operations).toContain(`| \`${op.method} ${op.path}\` |`);
  });

  it('replaces only what lies between the markers, and refuses a page without them', () => {
    const page = `# Title\n\nby hand\n\n${MARKERS.BEGIN}\n\nold\n\n${MARKERS.END}\n\nafter\n`;
    expect(withGeneratedPart(page, 'new')).toBe(`# Title\n\nby hand\n\n${MARKERS.BEGIN}\n\nnew\n\n${MARKERS.END}\n\nafter\n`);
    expect(() => withGeneratedPart('# Title\n', 'new')).toThrow(/markers/);
  });
});

describe('docs/administration-api.md', () => {
  it('describes in its table of resources only paths the OpenAPI document has', () => {
    const document = openApiDocument(ADMIN_OPERATIONS, { serverUrl: 'https://id.example.com/admin/v1', tokenUrl: 'https://id.example.com/connect/token' });
    const paths = Object.keys(document.paths as object);
    const guide = read('docs/administration-api.md');
    const table = guide.slice(guide.indexOf('| method and path | what |'));
    const rows = table.split('\n').filter((line) => line.startsWith('| `')).map((line) => line.split('|')[1] ?? '');
    expect(rows.length).toBeGreaterThan(10);
    const named = rows.flatMap((cell) => [...cell.matchAll(/(\/[a-z_{}/-]*[a-z_}])/g)].map((m) => m[1] as string));
    expect(named.filter((path) => !paths.includes(path))).toStrictEqual([]);
  });
});
