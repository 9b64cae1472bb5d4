/**
 * Where a `--cpu-prof` profile of an instance spent its main thread's time:
 * `node bench/profile-summary.ts FILE.cpuprofile [--top 25] [--callers REGEX]`. Prints self time
 * by package or source file, self time by function, and inclusive time of the service's own
 * functions (src/); with --callers, the time under frames whose `function place` matches, by
 * the nearest src/ frames above them (who calls it).
 * Work on libuv's thread pool (RSA, argon2) is not in such a profile: it shows what runs around it.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A source location, short: `src/…`, a package name, `node:…` or what V8 calls it. */
function place(url: string): string {
  if (url === '') return '(native or V8)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg?.[1]) return pkg[1];
  const src = /\/(src\/.*|bench\/.*)$/.exec(url);
  return src?.[1] ?? url.replace(/^file:\/\//, '');
}

function top(map: Map<string, number>, total: number, n: number): string {
  return [...map].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, us]) => `  ${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`).join('\n');
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' }, callers: { type: 'string' } } });
  const n = Number(values.top);
  const profile = JSON.parse(readFileSync(positionals[0] ?? '', 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((a, [, us]) => a + us, 0);
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const callers = new Map<string, number>();
  const pattern = values.callers === undefined ? undefined : new RegExp(values.callers);
  const label = (f: ProfileNode['callFrame']) => `${f.functionName || '(anonymous)'}  ${place(f.url)}:${f.lineNumber + 1}`;
  for (const [id, us] of self) {
    const frame = byId.get(id)?.callFrame;
    if (!frame || frame.functionName === '(idle)') continue;
    const where = place(frame.url);
    byPlace.set(where, (byPlace.get(where) ?? 0) + us);
    const name = `${frame.functionName || '(anonymous)'}  ${where}:${frame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    if (pattern) {
      const stack: ProfileNode['callFrame'][] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push((byId.get(at) as ProfileNode).callFrame);
      const hit = stack.findIndex((f) => pattern.test(label(f)));
      if (hit >= 0) {
        const above = stack.slice(hit + 1).filter((f) => f.url.includes('/src/')).slice(0, 3).map(label).join(' < ');
        callers.set(above || '(no src/ frame)', (callers.get(above || '(no src/ frame)') ?? 0) + us);
      }
    }
    // Inclusive time of src/ functions: each distinct one on the stack once.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)?.callFrame;
      if (!f?.url.includes('/src/')) continue;
      const key = `${f.functionName || '(anonymous)'}  ${place(f.url)}:${f.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const busy = total - idle;
  console.log(`main thread: ${(total / 1000).toFixed(0)} ms profiled, ${(busy / 1000).toFixed(0)} ms busy (percentages of busy time)\n`);
  console.log(`self time by package or file:\n${top(byPlace, busy, n)}\n`);
  console.log(`self time by function:\n${top(byFunction, busy, n)}\n`);
  console.log(`inclusive time of src/ functions:\n${top(inclusive, busy, n)}`);
  if (pattern) console.log(`\nunder ${pattern.source}, by the nearest src/ callers:\n${top(callers, busy, n)}`);
}
