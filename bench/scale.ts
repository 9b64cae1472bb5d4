/**
 * `npm run bench -- --scale`: do refresh and introspection keep their pace on a large database?
 * Two databases on the same PostgreSQL, seeded alike through `idp seed`; the second also gets
 * 10,000 clients, 100,000 users and 1,000,000 refresh token families (bench/scale-seed.ts). One
 * instance serves each; the scenarios run at concurrency 64 on one and then the other,
 * alternating over three rounds (so drift in the machine's load hits both). Each round's two
 * measurements are taken back to back, so the verdict is the median of the per-round ratios
 * large ÷ empty, which must be at least 0.9 (the ratio of the two medians is shown too).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEnvironment, runLoad, sourceState, type ScenarioResult } from './harness.ts';
import type { LoadJob } from './load.ts';
import { median } from './median.ts';
import { exchangeCode, mintCodes, refreshFamilies, seed, signIn } from './prepare.ts';
import { formatTable } from './report.ts';
import { SCALE, seedRows, type SeedRows, type SeedTimings } from './scale-seed.ts';
import type { ScenarioName } from './scenarios.ts';
import { freePort, productionEnv, startInstances, type Instances } from './servers.ts';

const SCENARIOS: ScenarioName[] = ['refresh', 'introspection', 'introspection-refresh', 'userinfo'];
/** Scenarios the target applies to; userinfo (a users lookup by id) is shown for information. */
const JUDGED: ScenarioName[] = ['refresh', 'introspection', 'introspection-refresh'];
const ROUNDS = 3;
const CONNECTIONS = 64;
const TARGET = 0.9;

type Label = 'empty' | 'large';

export interface ScaleComparison {
  scenario: ScenarioName;
  emptyRps: number;
  largeRps: number;
  /** Median of the per-round ratios large ÷ empty (the verdict). */
  ratio: number;
  roundRatios: number[];
  /** Ratio of the two medians. */
  ratioOfMedians: number;
  /** Median storage (PostgreSQL + Redis) CPU per request, ms: a noise-resistant view of the lookups' cost. */
  emptyStorageCpuMs: number;
  largeStorageCpuMs: number;
  target: number | null;
  met: boolean | null;
}

export interface ScaleReport {
  mode: 'scale';
  startedAt: string;
  seconds: number;
  machine: { cores: number; node: string; loadavgBefore: number[]; loadavgAfter: number[] };
  source: ReturnType<typeof sourceState>;
  rows: SeedRows;
  seed: SeedTimings;
  results: Array<ScenarioResult & { database: Label; round: number }>;
  comparison: ScaleComparison[];
}


async function measureOn(servers: Instances, scenario: ScenarioName): Promise<ScenarioResult> {
  const browser = await signIn(servers.url);
  const [code, spare] = await mintCodes(servers.url, browser, 2);
  const access = await exchangeCode(servers.url, code as string);
  // A current refresh token of its own, never rotated, for introspection-refresh.
  const held = await exchangeCode(servers.url, spare as string);
  const data = scenario === 'refresh' ? { refreshTokens: await refreshFamilies(servers.url, browser, 3 * CONNECTIONS) } : { accessToken: access.access_token, refreshToken: held.refresh_token };
  const job: LoadJob = { scenario, url: servers.url, connections: CONNECTIONS, warmupSeconds: 2, measureSeconds: 5, data };
  return runLoad(job, servers);
}

export async function runScale(options: { keepLogs: boolean }): Promise<ScaleReport> {
  const started = Date.now();
  const loadavgBefore = loadavg();
  const env = await createEnvironment();
  const logDir = mkdtempSync(join(tmpdir(), 'idp-bench-logs-'));
  const running: Instances[] = [];
  let seedTimings: SeedTimings | undefined;
  try {
    const largeUrl = await env.createDatabase();
    const urls: Record<Label, string> = { empty: env.databaseUrl, large: largeUrl };
    const servers = {} as Record<Label, Instances>;
    for (const label of ['empty', 'large'] as const) {
      const port = await freePort();
      const serverEnv = productionEnv(port, { DATABASE_URL: urls[label], REDIS_URL: env.redisUrl, IDP_SECRET: env.secret });
      await seed(serverEnv);
      if (label === 'large') console.log(`seeding the large database (${SCALE.families} families, ${SCALE.users} users, ${SCALE.clients} clients):`);
      const timings = label === 'large' ? await seedRows(largeUrl, SCALE, (line) => console.log(line)) : undefined;
      if (timings) console.log(`  seeded in ${timings.totalSeconds.toFixed(0)} s (VACUUM ANALYZE included)`);
      servers[label] = await startInstances(1, serverEnv, port, logDir, `scale-${label}`);
      running.push(servers[label]);
      if (timings) seedTimings = timings;
    }
    const results: ScaleReport['results'] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternating order: empty first in odd rounds, large first in even ones.
      const order: Label[] = round % 2 ? ['empty', 'large'] : ['large', 'empty'];
      for (const scenario of SCENARIOS) {
        for (const label of order) {
          const result = await measureOn(servers[label], scenario);
          results.push({ ...result, database: label, round });
          console.log(`  round ${round}  ${label.padEnd(5)}  ${scenario.padEnd(22)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(1)} ms  p99 ${result.p99.toFixed(1)} ms  non-2xx ${result.non2xx}  errors ${result.errors + result.timeouts}`);
        }
      }
    }
    const comparison = SCENARIOS.map((scenario): ScaleComparison => {
      const of = (label: Label, round?: number) => results.filter((r) => r.scenario === scenario && r.database === label && (round === undefined || r.round === round));
      const rps = (label: Label) => median(of(label).map((r) => r.rps));
      const storage = (label: Label) => median(of(label).map((r) => r.storageCpuMsPerRequest));
      const roundRatios = Array.from({ length: ROUNDS }, (_, i) => (of('large', i + 1)[0]?.rps ?? NaN) / (of('empty', i + 1)[0]?.rps ?? NaN));
      const ratio = median(roundRatios);
      const judged = JUDGED.includes(scenario);
      return {
        scenario, emptyRps: rps('empty'), largeRps: rps('large'), ratio, roundRatios, ratioOfMedians: rps('large') / rps('empty'),
        emptyStorageCpuMs: storage('empty'), largeStorageCpuMs: storage('large'), target: judged ? TARGET : null, met: judged ? ratio >= TARGET : null,
      };
    });
    const report: ScaleReport = {
      mode: 'scale', startedAt: new Date(started).toISOString(), seconds: (Date.now() - started) / 1000,
      machine: { cores: availableParallelism(), node: process.version, loadavgBefore, loadavgAfter: loadavg() },
      source: sourceState(), rows: SCALE, seed: seedTimings as SeedTimings, results, comparison,
    };
    printScale(report);
    return report;
  } finally {
    for (const s of running) await s.stop();
    await env.cleanup();
    if (options.keepLogs) console.log(`instance logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}

function printScale(report: ScaleReport): void {
  for (const label of ['empty', 'large'] as const) {
    console.log(`\n${label} database, every round:\n${formatTable(report.results.filter((r) => r.database === label))}`);
  }
  console.log(`\n${ROUNDS} rounds at concurrency ${CONNECTIONS}, large ÷ empty (verdict: the median of the per-round ratios):`);
  for (const c of report.comparison) {
    const verdict = c.met === null ? '(for information)' : c.met ? `met (target >= ${c.target})` : `NOT MET (target >= ${c.target})`;
    console.log(`  ${c.scenario.padEnd(22)} median req/s empty ${c.emptyRps.toFixed(0).padStart(5)}  large ${c.largeRps.toFixed(0).padStart(5)}  `
      + `rounds ${c.roundRatios.map((r) => r.toFixed(2)).join(' ')}  ratio ${c.ratio.toFixed(3)}  ${verdict}  `
      + `(db+redis ms/req ${c.emptyStorageCpuMs.toFixed(2)} -> ${c.largeStorageCpuMs.toFixed(2)})`);
  }
  console.log(`\nSeeding took ${report.seed.totalSeconds.toFixed(0)} s; the whole scale run took ${report.seconds.toFixed(0)} s.`);
}
