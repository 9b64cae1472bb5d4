/**
 * The bench harness still works end to end: `node bench/run.ts --smoke` (one instance,
 * concurrency 4, about one second per scenario, no warm-up, no scale) completes every scenario
 * with answers and without errors. Nothing here asserts a timing: the figures depend on the
 * machine and on whatever else runs on it.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tempDir } from './helpers/process.ts';
import { POSTGRES_ADMIN_URL, REDIS_URL, postgresAvailable, redisAvailable } from './helpers/services.ts';

const SCENARIOS = ['discovery', 'jwks', 'client-credentials', 'code-exchange', 'refresh', 'introspection', 'userinfo', 'password-sign-in'];

interface SmokeResult {
  scenario: string;
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
  it('runs every scenario briefly, each with answers and without a non-2xx answer or an error', async () => {
    const dir = tempDir('idp-bench-smoke-');
    try {
      const out = join(dir.path, 'smoke.json');
      const run = await runBench(['--smoke', '--out', out]);
      expect(run.code, run.output).toBe(0);
      const report = JSON.parse(readFileSync(out, 'utf8')) as { results: SmokeResult[] };
      expect(report.results.map((r) => r.scenario).sort()).toStrictEqual([...SCENARIOS].sort());
      for (const r of report.results) {
        expect({ scenario: r.scenario, non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts }).toStrictEqual({ scenario: r.scenario, non2xx: 0, errors: 0, timeouts: 0 });
        expect(r.requests, r.scenario).toBeGreaterThan(0);
      }
    } finally {
      dir.remove();
    }
  }, 90_000);
});
