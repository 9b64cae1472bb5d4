/**
 * The median of several standard runs: `node bench/median.ts bench/results/standard-*.json`.
 * Each figure is the median over the runs (and their rounds); non-2xx and errors are the worst
 * run's; each ratio to the floor or the peer is the median of the runs' medians of per-round
 * ratios (a round's ratio compares figures taken under the same conditions), with how many runs
 * met its target.
 */
import { readFileSync } from 'node:fs';
import type { ScenarioResult } from './harness.ts';
import { checks, formatChecks, formatTable, median, type Comparison, type Versus } from './report.ts';
import type { BenchReport } from './run.ts';

export { median } from './report.ts';

const NUMERIC = ['rps', 'p50', 'p99', 'max', 'requests', 'serverCpuMsPerRequest', 'mainThreadCpuMsPerRequest', 'storageCpuMsPerRequest', 'postgresCpuMsPerRequest', 'redisCpuMsPerRequest', 'loaderCpuMsPerRequest', 'peakRssMb', 'machineBusy', 'othersBusy'] as const;

function medianResults(reports: BenchReport[]): ScenarioResult[] {
  const groups = new Map<string, ScenarioResult[]>();
  for (const r of reports.flatMap((report) => report.results)) {
    const key = `${r.instances}|${r.scenario}|${r.connections}|${r.target ?? 'service'}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((runs) => {
    const first = runs[0] as ScenarioResult;
    const merged: ScenarioResult = { ...first, round: undefined, non2xx: Math.max(...runs.map((r) => r.non2xx)), errors: Math.max(...runs.map((r) => r.errors)), timeouts: Math.max(...runs.map((r) => r.timeouts)) };
    for (const field of NUMERIC) merged[field] = median(runs.map((r) => r[field] ?? NaN));
    const split = first.requestsByInstance.map((_, i) => median(runs.map((r) => (r.requestsByInstance[i] ?? 0) / Math.max(1, r.requestsByInstance.reduce((a, b) => a + b, 0)))));
    merged.requestsByInstance = split.map((share) => Math.round(share * 1000));
    return merged;
  });
}

function describe(list: Array<Versus | undefined>): string {
  const present = list.filter((v): v is Versus => v !== undefined);
  if (present.length === 0) return '';
  const first = present[0] as Versus;
  const value = median(present.map((v) => v.median));
  const verdict = first.target === undefined ? '' : `(target >= ${first.target}) ${value >= first.target ? 'pass' : 'FAIL'} [${present.filter((v) => v.met).length}/${present.length} runs]`;
  return `${value.toFixed(2)} ${verdict}`;
}

if (import.meta.main) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node bench/median.ts RESULT.json...');
    process.exit(2);
  }
  const reports = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as BenchReport);
  const results = medianResults(reports);
  console.log(`Median of ${reports.length} runs (${files.join(', ')})\n`);
  console.log(formatTable(results));
  console.log('\nService / floor and service / peer (median of the runs\' medians of per-round ratios):');
  const scenarios = [...new Set(reports.flatMap((r) => (r.comparisons ?? []).map((c) => c.scenario)))];
  for (const scenario of scenarios) {
    const of = reports.map((r) => (r.comparisons ?? []).find((c) => c.scenario === scenario)).filter((c): c is Comparison => c !== undefined);
    console.log(`  ${scenario.padEnd(20)} / floor ${describe(of.map((c) => c.vsFloor)).padEnd(36)} / peer ${describe(of.map((c) => c.vsPeer))}`);
  }
  console.log(`\nChecks on the medians at the highest concurrency:\n${formatChecks(checks(results))}`);
  console.log(`\nStart-up to ready: ${reports.map((r) => (r.startup ? `${r.startup.medianReadyMs.toFixed(0)} ms / ${r.startup.medianPeakRssMbAtReady.toFixed(0)} MB` : '-')).join(', ')}`);
  console.log(`Run times: ${reports.map((r) => `${r.seconds.toFixed(0)} s`).join(', ')}`);
}
