/**
 * Keeps the layout of ARCHITECTURE.md true by reading import lines: each library stays in its
 * folder, nothing but app.ts imports routes/, and only main.ts reads the environment or exits.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((path) => {
  const text = readFileSync(path, 'utf8');
  const imports = [...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm)]
    .map((m) => m[1] ?? m[2] ?? '');
  return { file: relative(SRC, path), text, imports };
});

/** Library -> the folders (or files) of src/ allowed to import it. */
const OWNERS: Array<[RegExp, string[]]> = [
  [/^jose$/, ['tokens/']],
  [/^(kysely|pg|@electric-sql\/pglite|ioredis)(\/|$)/, ['store/']],
  [/^ldapts$/, ['sources/']],
  [/^openid-client$/, ['sources/']],
  [/^@node-rs\/argon2$/, ['sources/']],
  [/^otplib$/, ['sessions/']],
  [/^(eta|@fastify\/.*|fastify)$/, ['routes/', 'app.ts']],
];

const owned = (file: string, owners: string[]) => owners.some((o) => (o.endsWith('/') ? file.startsWith(o) : file === o));

describe('architecture', () => {
  it('keeps each library in its folder', () => {
    const misplaced = files.flatMap(({ file, imports }) =>
      imports.flatMap((spec) => OWNERS.filter(([lib, owners]) => lib.test(spec) && !owned(file, owners)).map(() => `${file} imports ${spec}`)),
    );
    expect(misplaced).toStrictEqual([]);
  });

  it('lets nothing but app.ts import routes/', () => {
    const importers = files.filter(({ file, imports }) => !file.startsWith('routes/') && file !== 'app.ts' && imports.some((s) => s.includes('routes/')));
    expect(importers.map((f) => f.file)).toStrictEqual([]);
  });

  it('keeps grants, protocol, tokens, sessions, sources and store free of Fastify and of the routes', () => {
    const layered = files.filter(({ file }) => /^(grants|protocol|tokens|sessions|sources|store)\//.test(file));
    const offenders = layered.filter(({ imports }) => imports.some((s) => s.startsWith('fastify') || s.includes('/routes/') || s.includes('../app.ts')));
    expect(offenders.map((f) => f.file)).toStrictEqual([]);
  });

  it('keeps store/ free of everything above it', () => {
    const offenders = files.filter(({ file, imports }) => file.startsWith('store/') && imports.some((s) => /\/(grants|sessions|sources|routes|cli)\//.test(s) || s.includes('/tokens/')));
    expect(offenders.map((f) => f.file)).toStrictEqual([]);
  });

  it('reads process.env and exits in main.ts only', () => {
    const offenders = files.filter(({ file, text }) => file !== 'main.ts' && /process\.(env|exit)\b/.test(text));
    expect(offenders.map((f) => f.file)).toStrictEqual([]);
  });

  it('keeps errors.ts a leaf', () => {
    const errors = files.find((f) => f.file === 'errors.ts');
    expect(errors?.imports.filter((s) => s.startsWith('.'))).toStrictEqual([]);
  });
});
