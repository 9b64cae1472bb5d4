/**
 * `npm run bench`: the orchestrator. Measures the ceilings, then runs the service in its
 * production shape (one instance, then one per core on the same port) and loads every scenario
 * at each concurrency from a separate load process. Prints one table with the ratios and checks
 * and writes the same as JSON under bench/results/.
 *
 *   npm run bench                  # the standard run (under 5 minutes)
 *   npm run bench -- --smoke       # ~1 s per scenario, 1 instance, concurrency 4 (the smoke test)
 *   npm run bench -- --scale       # refresh and introspection on an empty vs a large database
 *   options: --out FILE (JSON path), --keep-logs (keep the instances' log files); for experiments:
 *   --only refresh,userinfo  --instances 1,2  --concurrency 64  --no-ceilings
 *   (IDP_BENCH_SERVER_NODE_ARGS="--cpu-prof ..." adds Node.js flags to the instances)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Ceilings } from './ceilings.ts';
import { createEnvironment, runCeilings, runLoad, sourceState, type Environment, type ScenarioResult } from './harness.ts';
import type { LoadJob } from './load.ts';
import { authorizePath, exchangeCode, mintCodes, refreshFamilies, seed, signIn, SIGN_IN_USER } from './prepare.ts';
import { checks, formatCeilings, formatChecks, formatRatios, formatTable, ratios } from './report.ts';
import { runScale } from './scale.ts';
import type { ScenarioData, ScenarioName } from './scenarios.ts';
import { freePort, productionEnv, ROOT, startInstances } from './servers.ts';

export interface Settings {
  mode: 'standard' | 'smoke';
  scenarios: ScenarioName[];
  warmupSeconds: number;
  measureSeconds: number;
  concurrencies: number[];
  instanceCounts: number[];
  ceilingSeconds: number;
  ceilingWarmup: number;
}

/** Run order: refresh before code exchange, whose codes are minted to refresh's measured pace. */
export const RUN_ORDER: ScenarioName[] = ['discovery', 'jwks', 'client-credentials', 'introspection', 'userinfo', 'refresh', 'code-exchange', 'password-sign-in'];

export function settingsFor(smoke: boolean): Settings {
  return smoke
    ? { mode: 'smoke', scenarios: RUN_ORDER, warmupSeconds: 0, measureSeconds: 1, concurrencies: [4], instanceCounts: [1], ceilingSeconds: 0.5, ceilingWarmup: 0 }
    : { mode: 'standard', scenarios: RUN_ORDER, warmupSeconds: 2, measureSeconds: 5, concurrencies: [16, 64], instanceCounts: [...new Set([1, availableParallelism()])], ceilingSeconds: 2, ceilingWarmup: 0.5 };
}

/** Everything a scenario consumes, made just before it runs. */
async function dataFor(scenario: ScenarioName, connections: number, ctx: RowContext, settings: Settings): Promise<{ data: ScenarioData; amounts?: LoadJob['amounts'] }> {
  switch (scenario) {
    case 'refresh':
      // Chained: each answer's refresh token is the next request's; 3 per connection outlast the phase ends.
      return { data: { refreshTokens: await refreshFamilies(ctx.base, ctx.browser, 3 * connections) } };
    case 'code-exchange': {
      // Codes are single-use and live 5 minutes: minted now, as many as refresh's pace (the same
      // two signatures and one transaction) needs; the phases then run for that many requests.
      const pace = ctx.results.find((r) => r.scenario === 'refresh' && r.connections === connections && r.instances === ctx.instances)?.rps ?? 200;
      const warmup = settings.warmupSeconds > 0 ? Math.max(connections, Math.ceil(pace * settings.warmupSeconds)) : 0;
      const measure = Math.max(connections, Math.ceil(pace * settings.measureSeconds));
      const codes = await mintCodes(ctx.base, ctx.browser, warmup + measure + connections);
      return { data: { codes }, amounts: { warmup, measure } };
    }
    case 'password-sign-in':
      return { data: { authorizePath: authorizePath(), user: SIGN_IN_USER } };
    default:
      return { data: { accessToken: ctx.accessToken } };
  }
}

interface RowContext {
  instances: number;
  base: string;
  browser: Awaited<ReturnType<typeof signIn>>;
  accessToken: string;
  results: ScenarioResult[];
}

async function runRow(instances: number, env: Environment, settings: Settings, logDir: string, results: ScenarioResult[]): Promise<void> {
  const port = await freePort();
  const serverEnv = productionEnv(port, { DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, IDP_SECRET: env.secret });
  const servers = await startInstances(instances, serverEnv, port, logDir, `row-${instances}`);
  try {
    const browser = await signIn(servers.url);
    const [code] = await mintCodes(servers.url, browser, 1);
    const tokens = await exchangeCode(servers.url, code as string);
    const ctx: RowContext = { instances, base: servers.url, browser, accessToken: tokens.access_token, results };
    for (const scenario of settings.scenarios) {
      for (const connections of settings.concurrencies) {
        const { data, amounts } = await dataFor(scenario, connections, ctx, settings);
        const job: LoadJob = { scenario, url: servers.url, connections, warmupSeconds: settings.warmupSeconds, measureSeconds: settings.measureSeconds, data, ...(amounts ? { amounts } : {}) };
        const result = await runLoad(job, servers);
        results.push(result);
        console.log(`  ${instances} inst  ${scenario.padEnd(20)} c${String(connections).padEnd(3)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(1)} ms  p99 ${result.p99.toFixed(1)} ms  non-2xx ${result.non2xx}  errors ${result.errors + result.timeouts}`);
      }
    }
  } finally {
    await servers.stop();
  }
}

export interface BenchReport {
  mode: Settings['mode'];
  startedAt: string;
  seconds: number;
  machine: { cores: number; node: string; loadavgBefore: number[]; loadavgAfter: number[] };
  source: ReturnType<typeof sourceState>;
  settings: Settings;
  /** Absent only when an experiment skipped them (--no-ceilings). */
  ceilings: Ceilings | undefined;
  results: ScenarioResult[];
  ratios: ReturnType<typeof ratios>;
  checks: ReturnType<typeof checks>;
}

export async function runStandard(settings: Settings, options: { keepLogs: boolean }): Promise<BenchReport> {
  const started = Date.now();
  const loadavgBefore = loadavg();
  console.log(`bench (${settings.mode}): ceilings first, on a quiet bench`);
  const ceilings = settings.ceilingSeconds > 0 ? await runCeilings(settings.ceilingSeconds, settings.ceilingWarmup) : undefined;
  if (ceilings) console.log(formatCeilings(ceilings));
  const env = await createEnvironment();
  const logDir = mkdtempSync(join(tmpdir(), 'idp-bench-logs-'));
  const results: ScenarioResult[] = [];
  try {
    await seed(productionEnv(0, { DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, IDP_SECRET: env.secret }));
    for (const instances of settings.instanceCounts) await runRow(instances, env, settings, logDir, results);
  } finally {
    await env.cleanup();
    if (options.keepLogs) console.log(`instance logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
  return {
    mode: settings.mode, startedAt: new Date(started).toISOString(), seconds: (Date.now() - started) / 1000,
    machine: { cores: availableParallelism(), node: process.version, loadavgBefore, loadavgAfter: loadavg() },
    source: sourceState(), settings, ceilings, results, ratios: ceilings ? ratios(results, ceilings) : [], checks: checks(results),
  };
}

export function printReport(report: BenchReport): void {
  console.log(`\n${report.ceilings ? `${formatCeilings(report.ceilings)}\n\n` : ''}${formatTable(report.results)}`);
  console.log(`\nRatios to the ceilings:\n${formatRatios(report.ratios)}`);
  console.log(`\nChecks at concurrency ${Math.max(...report.results.map((r) => r.connections))}:\n${formatChecks(report.checks)}`);
  console.log(`\nWhole run: ${report.seconds.toFixed(0)} s (load average ${report.machine.loadavgBefore[0]?.toFixed(1)} before, ${report.machine.loadavgAfter[0]?.toFixed(1)} after)`);
}

function writeJson(report: unknown, out: string | undefined, prefix: string): string {
  const file = out ?? join(ROOT, 'bench/results', `${prefix}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean' }, scale: { type: 'boolean' }, out: { type: 'string' }, 'keep-logs': { type: 'boolean' },
      only: { type: 'string' }, instances: { type: 'string' }, concurrency: { type: 'string' }, 'no-ceilings': { type: 'boolean' },
    },
  });
  const list = (v: string | undefined) => v?.split(',').map((x) => x.trim()).filter((x) => x !== '');
  const keepLogs = values['keep-logs'] === true;
  if (values.scale) {
    const report = await runScale({ keepLogs });
    console.log(`\nJSON: ${writeJson(report, values.out, 'scale')}`);
  } else {
    const settings = settingsFor(values.smoke === true);
    const only = list(values.only);
    if (only) settings.scenarios = RUN_ORDER.filter((s) => only.includes(s));
    if (values.instances) settings.instanceCounts = (list(values.instances) ?? []).map(Number);
    if (values.concurrency) settings.concurrencies = (list(values.concurrency) ?? []).map(Number);
    if (values['no-ceilings']) settings.ceilingSeconds = 0;
    const report = await runStandard(settings, { keepLogs });
    printReport(report);
    console.log(`\nJSON: ${writeJson(report, values.out, report.mode)}`);
  }
}
