/**
 * The median of several standard runs: `node bench/median.ts bench/results/standard-*.json`.
 * Each figure is the median over the runs; non-2xx and errors are the worst run's; each ratio is
 * the median of the ratios measured within each run (a run's ratio compares figures taken under
 * the same conditions), with how many runs met its target.
 */
import { readFileSync } from 'node:fs';
import type { Ceiling } from './ceilings.ts';
import type { ScenarioResult } from './harness.ts';
import { checks, formatCeilings, formatChecks, formatTable, type Ratio } from './report.ts';
import type { BenchReport } from './run.ts';

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const NUMERIC = ['rps', 'p50', 'p99', 'max', 'requests', 'serverCpuMsPerRequest', 'storageCpuMsPerRequest', 'loaderCpuMsPerRequest', 'peakRssMb', 'machineBusy', 'othersBusy'] as const;

function medianResults(reports: BenchReport[]): ScenarioResult[] {
  const groups = new Map<string, ScenarioResult[]>();
  for (const r of reports.flatMap((report) => report.results)) {
    const key = `${r.instances}|${r.scenario}|${r.connections}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((runs) => {
    const first = runs[0] as ScenarioResult;
    const merged: ScenarioResult = { ...first, non2xx: Math.max(...runs.map((r) => r.non2xx)), errors: Math.max(...runs.map((r) => r.errors)), timeouts: Math.max(...runs.map((r) => r.timeouts)) };
    for (const field of NUMERIC) merged[field] = median(runs.map((r) => r[field]));
    const split = first.requestsByInstance.map((_, i) => median(runs.map((r) => (r.requestsByInstance[i] ?? 0) / Math.max(1, r.requestsByInstance.reduce((a, b) => a + b, 0)))));
    merged.requestsByInstance = split.map((share) => Math.round(share * 1000));
    return merged;
  });
}

function medianCeiling(list: Ceiling[]): Ceiling {
  return { perSecond: median(list.map((c) => c.perSecond)), operations: median(list.map((c) => c.operations)), seconds: median(list.map((c) => c.seconds)), cpuMsPerOp: median(list.map((c) => c.cpuMsPerOp)) };
}

function medianRatios(reports: BenchReport[]): Array<Ratio & { runsMet: number; runs: number }> {
  const groups = new Map<string, Ratio[]>();
  for (const r of reports.flatMap((report) => report.ratios)) {
    const key = `${r.scenario}|${r.instances}|${r.connections}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((list) => {
    const value = median(list.map((r) => r.value));
    const first = list[0] as Ratio;
    return { ...first, value, met: value >= first.target, runsMet: list.filter((r) => r.met).length, runs: list.length };
  });
}

if (import.meta.main) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: node bench/median.ts RESULT.json...');
    process.exit(2);
  }
  const reports = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as BenchReport);
  const withCeilings = reports.filter((r) => r.ceilings);
  const results = medianResults(reports);
  console.log(`Median of ${reports.length} runs (${files.join(', ')})\n`);
  if (withCeilings.length > 0) {
    const c = withCeilings.map((r) => r.ceilings as NonNullable<BenchReport['ceilings']>);
    const first = c[0] as NonNullable<BenchReport['ceilings']>;
    console.log(`${formatCeilings({ ...first, signRs256: medianCeiling(c.map((x) => x.signRs256)), verifyRs256: medianCeiling(c.map((x) => x.verifyRs256)), argon2Verify: medianCeiling(c.map((x) => x.argon2Verify)) })}\n`);
  }
  console.log(formatTable(results));
  console.log('\nRatios (median of the per-run ratios; runs that met the target):');
  for (const r of medianRatios(reports)) {
    console.log(`  ${`${r.scenario} / ${r.ceiling}`.padEnd(38)} inst ${r.instances} conc ${String(r.connections).padStart(2)}: ${r.value.toFixed(3)}  (target >= ${r.target})  ${r.met ? 'met' : 'NOT MET'}  [${r.runsMet}/${r.runs} runs]`);
  }
  console.log(`\nChecks on the medians at concurrency ${Math.max(...results.map((r) => r.connections))}:\n${formatChecks(checks(results))}`);
  console.log(`\nRun times: ${reports.map((r) => `${r.seconds.toFixed(0)} s`).join(', ')}`);
}
