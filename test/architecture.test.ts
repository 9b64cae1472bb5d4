/**
 * Keeps the README's Layout true by reading import lines (type imports included): each library
 * stays in its folder, every import points down the layer order, no two files import each other
 * (however far round), nothing but app.ts imports routes/, and only main.ts reads the environment
 * or exits.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');
/** A static import or re-export (`from '…'`), a side-effect import, or a dynamic `import('…')`. */
const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;
const specifier = (m: RegExpMatchArray) => m[1] ?? m[2] ?? m[3] ?? '';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles(SRC).map((path) => {
  const text = readFileSync(path, 'utf8');
  const imports = [...text.matchAll(IMPORT)].map(specifier);
  return { file: relative(SRC, path), text, imports };
});

/** The file of src/ a relative import names (undefined when it leaves src/, as migrations/ do). */
function target(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const path = normalize(join(dirname(file), spec));
  return path.startsWith('..') ? undefined : path;
}

/**
 * The layers of src/, top first, as the README's Layout lists them. A file may import its own unit
 * (its folder, or the files named together) or a unit of a lower layer, never one of its own
 * layer or above.
 */
const LAYERS: string[][] = [
  ['main.ts'],
  ['cli/'],
  ['app.ts'],
  ['routes/'],
  ['services*.ts', 'maintenance.ts'],
  ['console/'],
  ['admin/'],
  ['sessions/'],
  ['factors/'],
  ['grants/'],
  ['protocol/'],
  ['sources/'],
  ['tokens/'],
  ['events/', 'mail/', 'metrics*.ts', 'data-dir.ts'],
  ['config.ts+config/'],
  ['store/'],
  ['scopes.ts', 'clock.ts', 'logging.ts', 'telemetry.ts', 'control-characters.ts', 'version.ts', 'email-address.ts'],
  ['errors.ts'],
];

function unitOf(file: string): string {
  if (file === 'config.ts' || file.startsWith('config/')) return 'config.ts+config/';
  if (file.includes('/')) return `${file.slice(0, file.indexOf('/'))}/`;
  if (/^services[\w-]*\.ts$/.test(file)) return 'services*.ts';
  if (/^metrics[\w-]*\.ts$/.test(file)) return 'metrics*.ts';
  return file;
}

const layerOf = (unit: string) => LAYERS.findIndex((layer) => layer.includes(unit));

/** File -> the files of src/ it imports. */
const graph = new Map(files.map(({ file, imports }) => [file, imports.map((s) => target(file, s)).filter((t) => t !== undefined)]));

/** Groups of files that import each other, however far round (Tarjan's strongly connected components). */
function circles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const next of edges.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(file, Math.min(low.get(file)!, index.get(next)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop()!;
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || edges.get(file)?.includes(file)) found.push(group.sort());
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** Library -> the folders (or files) of src/ allowed to import it. */
const OWNERS: Array<[RegExp, string[]]> = [
  [/^jose$/, ['tokens/']],
  [/^(kysely|pg|@electric-sql\/pglite(-socket)?|ioredis)(\/|$)/, ['store/']],
  [/^ldapts$/, ['sources/']],
  [/^openid-client$/, ['sources/']],
  [/^@node-rs\/(argon2|bcrypt)$/, ['sources/']],
  [/^stream-(json|chain)(\/|$)/, ['admin/']],
  [/^otplib$/, ['sessions/', 'factors/']],
  [/^@simplewebauthn\/server(\/|$)/, ['factors/']],
  [/^nodemailer(\/|$)/, ['mail/']],
  [/^(eta|@fastify\/.*|fastify)$/, ['routes/', 'app.ts']],
  [/^bowser$/, ['routes/account-connections.ts']],
];

const owned = (file: string, owners: string[]) => owners.some((o) => (o.endsWith('/') ? file.startsWith(o) : file === o));

describe('architecture', () => {
  it('places every file of src/ in a layer', () => {
    expect(files.map((f) => f.file).filter((file) => layerOf(unitOf(file)) < 0)).toStrictEqual([]);
  });

  it('points every import down the layers: to its own unit or a lower layer', () => {
    const upward = [...graph].flatMap(([file, targets]) => targets
      .filter((t) => unitOf(t) !== unitOf(file) && layerOf(unitOf(t)) <= layerOf(unitOf(file)))
      .map((t) => `${file} imports ${t}`));
    expect(upward).toStrictEqual([]);
  });

  it('has no import circles between files', () => {
    expect(circles(graph)).toStrictEqual([]);
  });

  it('finds a circle and an upward import when there is one', () => {
    // The two checks above are only as good as what they can see.
    expect(circles(new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]))).toStrictEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(target('protocol/end-session.ts', '../sessions/csrf.ts')).toBe('sessions/csrf.ts');
    expect(layerOf(unitOf('sessions/csrf.ts'))).toBeLessThan(layerOf(unitOf('protocol/end-session.ts')));
    expect(target('store/sql/durable.ts', '../../../migrations/index.ts')).toBeUndefined();
  });

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

  it('keeps admin, grants, protocol, tokens, sessions, sources and store free of Fastify (and its plugins, and eta) and of the routes', () => {
    const layered = files.filter(({ file }) => /^(admin|grants|protocol|tokens|sessions|sources|store)\//.test(file));
    const http = (s: string) => /^(fastify|@fastify\/|eta$)/.test(s) || s.includes('/routes/') || s.includes('../app.ts');
    const offenders = layered.flatMap(({ file, imports }) => imports.filter(http).map((s) => `${file} imports ${s}`));
    expect(offenders).toStrictEqual([]);
  });

  it('sees an import of fastify or a plugin in any form it can be written', () => {
    // The check above is only as good as the import lines it reads.
    const read = (text: string) => [...text.matchAll(IMPORT)].map(specifier);
    const forms = [
      "import type { FastifyReply } from 'fastify';",
      "import Fastify from \"fastify\";",
      "import {\n  type FastifyRequest,\n} from 'fastify';",
      "export type { FastifyInstance } from 'fastify';",
      "import formbody from '@fastify/formbody';",
      "import '@fastify/view';",
      "const view = await import('@fastify/view');",
    ];
    expect(forms.flatMap(read)).toStrictEqual(['fastify', 'fastify', 'fastify', 'fastify', '@fastify/formbody', '@fastify/view', '@fastify/view']);
  });

  it('keeps admin/ below the command line and the routes, and silent: it returns results, it does not print', () => {
    const admin = files.filter(({ file }) => file.startsWith('admin/'));
    expect(admin.length).toBeGreaterThan(0);
    const offenders = admin.flatMap(({ file, text, imports }) => [
      ...imports.filter((s) => /\/(cli|routes)\//.test(s) || /(^|\/)(app|main|services[\w-]*)\.ts$/.test(s)).map((s) => `${file} imports ${s}`),
      ...(/\b(console\.|process\.std(out|err))/.test(text) ? [`${file} prints`] : []),
    ]);
    expect(offenders).toStrictEqual([]);
  });

  it('keeps the administrative layer\'s modules out of the layers below it', () => {
    const below = files.filter(({ file }) => /^(grants|protocol|tokens|sessions|sources|store)\//.test(file));
    const offenders = below.flatMap(({ file, imports }) => imports.filter((s) => s.includes('/admin/')).map((s) => `${file} imports ${s}`));
    expect(offenders).toStrictEqual([]);
  });

  it('keeps store/ free of everything above it', () => {
    const offenders = files.filter(({ file, imports }) => file.startsWith('store/') && imports.some((s) => /\/(admin|grants|sessions|sources|routes|cli)\//.test(s) || s.includes('/tokens/')));
    expect(offenders.map((f) => f.file)).toStrictEqual([]);
  });

  it('keeps events/ below everything that emits: it imports only its own files, the leaves and store types', () => {
    const allowed = (s: string) => !s.startsWith('.') || /^\.\/[^/]+\.ts$/.test(s) || /^\.\.\/(errors|clock|config)\.ts$/.test(s) || s === '../store/types.ts';
    const offenders = files.filter(({ file }) => file.startsWith('events/')).flatMap(({ file, imports }) => imports.filter((s) => !allowed(s)).map((s) => `${file} imports ${s}`));
    expect(offenders).toStrictEqual([]);
    const emitters = files.filter(({ imports }) => imports.some((s) => s.includes('/events/')));
    expect(emitters.filter(({ file }) => /^(store|tokens|sources)\//.test(file)).map((f) => f.file)).toStrictEqual([]);
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
