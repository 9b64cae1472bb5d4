/**
 * docs/moving-from-keycloak.md stays true: its blocks marked `<!-- runs-in-test -->` run in
 * order, as a reader would paste them, in a folder of their own against an embedded database
 * of their own; the outputs it shows are the outputs they give.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { copyMigratedDatabase } from '../helpers/embedded-database.ts';
import { IDP_BIN, ROOT, runProcess, tempDir, testEnv } from '../helpers/process.ts';

const PAGE = readFileSync(join(ROOT, 'docs/moving-from-keycloak.md'), 'utf8');

/** The shell blocks that follow the marker, in the page's order. */
function runnableBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/<!-- runs-in-test -->\s*```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

describe('docs/moving-from-keycloak.md', () => {
  const dir = tempDir('idp-docs-');
  afterAll(() => dir.remove());

  it('runs every marked block in order, each exiting 0, and prints what the page shows', async () => {
    const blocks = runnableBlocks(PAGE);
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    await copyMigratedDatabase(dir.path);
    // `idp` as the page defines it: the project's command line.
    const prelude = `set -e\nidp() { "${process.execPath}" "${IDP_BIN}" "$@"; }\ncd "${dir.path}"\n`;
    const outputs: string[] = [];
    for (const block of blocks) {
      const run = await runProcess('bash', ['-c', prelude + block], testEnv({ IDP_DATA_DIR: dir.path }));
      expect(run.code, `${block}\n${run.stdout}${run.stderr}`).toBe(0);
      outputs.push(run.stdout);
    }
    const [, dryRun, imported, again] = outputs;
    const shown = /```sh\nidp import realm-export.json --format keycloak --dry-run\n```\s*```\n([\s\S]*?)```/.exec(PAGE)?.[1];
    expect(dryRun).toBe(shown);
    expect(imported).toContain('users: 1 created, 0 updated, 0 skipped, 0 refused; clients: 1 created');
    expect(imported).toMatch(/alice/);
    expect(imported).not.toMatch(/pbkdf2|JywVg01O/);
    expect(again).toContain('users: 0 created, 0 updated, 1 skipped, 0 refused');
  });
});
