/**
 * The examples of the documentation run: every shell block marked `<!-- runs-in-test -->` in the
 * README and docs/ runs, page by page in the pages' order and each page's blocks in order (as a
 * reader pastes them), against one server started on the embedded default with its demo data.
 * `curl http://localhost:3000/…` goes to that server (failing on an HTTP error, as the examples
 * mean to succeed), `npm run -s idp -- …` is the project's command line beside it. The migration
 * guide's blocks need no server and have their own suite (docs-moving-from-keycloak.test.ts).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyMigratedDatabase } from '../helpers/embedded-database.ts';
import { IDP_BIN, ROOT, runProcess, startServer, tempDir, testEnv, type RunningServer } from '../helpers/process.ts';

const OWN_SUITE = ['docs/moving-from-keycloak.md'];

function markdownUnder(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownUnder(path) : path.endsWith('.md') ? [path] : [];
  });
}

/** The shell blocks that follow the marker, in the page's order. */
function runnableBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/<!-- runs-in-test -->\s*```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
}

const pages = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))]
  .map((path) => ({ page: relative(ROOT, path), blocks: runnableBlocks(readFileSync(path, 'utf8')) }))
  .filter(({ page, blocks }) => blocks.length > 0 && !OWN_SUITE.includes(page));

/** What a page's answers must show besides each block exiting 0: the example did what it says. */
const SHOWS: Record<string, RegExp> = {
  'README.md': /demo/,
  'docs/getting-started.md': /"issuer":"http:\/\/127\.0\.0\.1:\d+\/"/,
  'docs/applications.md': /"access_token":"[\w-]+\.[\w-]+\.[\w-]+"/,
  'docs/administration-api.md': /"locked":true/,
};

/** A bash prelude that makes the reader's machine of the examples this test's: their curl, npm and node. */
function prelude(server: RunningServer, cwd: string): string {
  return [
    'set -eo pipefail',
    `cd '${cwd}'`,
    `node() { '${process.execPath}' "$@"; }`,
    `npm() {`,
    `  if [ "$1 $2 $3 $4" = "run -s idp --" ]; then shift 4; elif [ "$1 $2 $3" = "run idp --" ]; then shift 3; else echo "not an idp command: npm $*" >&2; return 2; fi`,
    `  '${process.execPath}' '${IDP_BIN}' "$@"`,
    `}`,
    `curl() {`,
    `  local args=(); for arg in "$@"; do args+=("\${arg//http:\\/\\/localhost:3000/${server.url}}"); done`,
    `  command curl --fail-with-body "\${args[@]}"`,
    `}`,
    '',
  ].join('\n');
}

describe.runIf(pages.length > 0)('the runnable examples of the documentation', () => {
  const data = tempDir('idp-docs-examples-');
  const work = tempDir('idp-docs-work-');
  let server: RunningServer;

  beforeAll(async () => {
    await copyMigratedDatabase(data.path);
    server = await startServer({ IDP_DATA_DIR: data.path });
  });

  afterAll(async () => {
    await server?.stop();
    data.remove();
    work.remove();
  });

  it('are marked in the pages that promise them', () => {
    expect(pages.map((p) => p.page)).toEqual(expect.arrayContaining(Object.keys(SHOWS)));
  });

  it.each(pages.map((p) => [p.page, p.blocks] as const))('%s: each marked block exits 0 and does what it says', async (page, blocks) => {
    let shown = '';
    for (const block of blocks) {
      const run = await runProcess('bash', ['-c', prelude(server, work.path) + block], testEnv({ IDP_DATA_DIR: data.path }));
      expect(run.code, `${page}:\n${block}\n${run.stdout}${run.stderr}`).toBe(0);
      shown += run.stdout;
    }
    const expected = SHOWS[page];
    if (expected) expect(shown.replace(/\s+/g, '')).toMatch(expected);
  });
});
