/**
 * The bench harness still works end to end: `node bench/run.ts --smoke` (one instance,
 * concurrency 4, one round of about half a second per measurement, no warm-up, no scale)
 * completes every scenario at the service, its floor and the peer with answers and without
 * errors. Nothing here asserts a timing: the figures depend on the machine and on whatever else
 * runs on it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tempDir } from './helpers/process.ts';
import { POSTGRES_ADMIN_URL, REDIS_URL, postgresAvailable, redisAvailable } from './helpers/services.ts';

/** Every scenario at each target that answers it (bench/rounds.ts TARGETS_OF). */
const MEASURED = [
  'discovery/service', 'jwks/service',
  'client-credentials/service', 'client-credentials/floor', 'client-credentials/peer',
  'introspection/service', 'introspection/floor', 'introspection/peer',
  'userinfo/service', 'userinfo/floor',
  'refresh/service', 'refresh/floor', 'refresh/peer',
  'code-exchange/service', 'code-exchange/floor', 'code-exchange/peer',
  'password-sign-in/service', 'password-sign-in/floor',
];

interface SmokeResult {
  scenario: string;
  target: string;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

function runBench(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bench/run.ts'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', IDP_BENCH_POSTGRES_URL: POSTGRES_ADMIN_URL, IDP_BENCH_REDIS_URL: REDIS_URL },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.runIf(postgresAvailable && redisAvailable)('bench harness (npm run bench -- --smoke)', () => {
  it('runs every scenario briefly at the service, its floor and the peer, each with answers and without a non-2xx answer or an error', async () => {
    const dir = tempDir('idp-bench-smoke-');
    try {
      const out = join(dir.path, 'smoke.json');
      const run = await runBench(['--smoke', '--out', out]);
      expect(run.code, run.output).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8')) as { results: SmokeResult[] };
      expect(report.results.map((r) => `${r.scenario}/${r.target}`).sort()).toStrictEqual([...MEASURED].sort());
      for (const r of report.results) {
        const name = `${r.scenario}/${r.target}`;
        expect({ name, non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts }).toStrictEqual({ name, non2xx: 0, errors: 0, timeouts: 0 });
        expect(r.requests, name).toBeGreaterThan(0);
      }
    } finally {
      dir.remove();
    }
  });
});

describe('bench command line', () => {
  it.each([
    [['--only', 'refrsh,userinfo'], "bench: --only: unknown scenario 'refrsh' (one of discovery,"],
    [['--rounds', '0'], "bench: --rounds must be a positive whole number, not '0'"],
    [['--concurrency', '6e1'], "bench: --concurrency must be a positive whole number, not '6e1'"],
    [['--scale', '--smoke'], 'bench: --scale and --smoke are two different runs; choose one'],
    [['--scale', '--only', 'refresh'], 'bench: --only does not apply to --scale, which measures its own fixed set'],
    [['--bogus'], 'bench: unknown option --bogus'],
    [['--concurrency'], 'bench: option --concurrency needs a value'],
    [['--smoke=yes'], 'bench: option --smoke takes no value'],
  ])('refuses %j with one line naming the mistake, before it starts anything', async (args, line) => {
    const run = await runBench(args);
    expect(run.code).toBe(2);
    const [first, usage, ...rest] = run.output.trimEnd().split('\n');
    expect(first?.startsWith(line), run.output).toBe(true);
    expect(usage).toMatch(/^usage: npm run bench /);
    expect(rest).toStrictEqual([]);
  });

  it('prints its usage on --help', async () => {
    const run = await runBench(['--help']);
    expect({ code: run.code, output: run.output }).toStrictEqual({ code: 0, output: expect.stringMatching(/^usage: npm run bench .*--only SCENARIO,\.\.\..*\n$/) });
  });
});
