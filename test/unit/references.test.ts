/**
 * Every reference in the repository is one its reader can follow: the documents that guide the
 * team (the protocol interface, the operational contract, the architecture notes) are not shipped,
 * so code, tests, the bench, the READMEs and docs/ name a page of docs/ or an RFC and section instead.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const FOLDERS = ['src', 'test', 'bench', 'migrations', 'templates', 'bin', 'deploy', 'docs', 'scripts'];
const FILES = ['README.md', 'CONTRIBUTING.md', 'SECURITY.md', 'bench/README.md', 'Dockerfile', 'compose.yaml'];
const UNSHIPPED = /interface\.md|CONTRACT(\.md| section|'s)|ARCHITECTURE\.md/;
const THIS_FILE = relative(ROOT, import.meta.filename);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

describe('references', () => {
  it('point at nothing outside the repository', () => {
    const paths = [...FOLDERS.flatMap((folder) => filesUnder(join(ROOT, folder))), ...FILES.map((file) => join(ROOT, file))]
      .filter((path) => relative(ROOT, path) !== THIS_FILE);
    const offenders = paths.flatMap((path) =>
      readFileSync(path, 'utf8')
        .split('\n')
        .flatMap((line, index) => (UNSHIPPED.test(line) ? [`${relative(ROOT, path)}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(offenders).toEqual([]);
  });
});
