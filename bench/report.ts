/**
 * The bench's verdicts and its table: each scenario's figures, the ratios to the ceilings with
 * their targets, and the checks every scenario must pass at concurrency 64.
 */
import type { Ceilings } from './ceilings.ts';
import type { ScenarioResult } from './harness.ts';
import type { ScenarioName } from './scenarios.ts';

/** Table order (the issue's order). */
export const SCENARIO_ORDER: ScenarioName[] = [
  'discovery', 'jwks', 'client-credentials', 'code-exchange', 'refresh', 'introspection', 'introspection-refresh', 'userinfo', 'password-sign-in',
];

export interface Ratio {
  scenario: ScenarioName;
  instances: number;
  connections: number;
  ceiling: 'signRs256' | 'verifyRs256' | 'argon2Verify';
  value: number;
  target: number;
  met: boolean;
}

export interface Check {
  scenario: ScenarioName;
  instances: number;
  connections: number;
  check: 'p99 <= 4 x p50' | 'no non-2xx or errors' | 'peak RSS <= 300 MB';
  value: string;
  met: boolean;
}

const TARGETS: Array<{ scenario: ScenarioName; ceiling: Ratio['ceiling']; target: number }> = [
  { scenario: 'client-credentials', ceiling: 'signRs256', target: 0.6 },
  { scenario: 'code-exchange', ceiling: 'signRs256', target: 0.3 },
  { scenario: 'refresh', ceiling: 'signRs256', target: 0.3 },
  { scenario: 'introspection', ceiling: 'verifyRs256', target: 0.25 },
  { scenario: 'userinfo', ceiling: 'verifyRs256', target: 0.25 },
  { scenario: 'password-sign-in', ceiling: 'argon2Verify', target: 0.8 },
];

export function ratios(results: ScenarioResult[], ceilings: Ceilings): Ratio[] {
  return TARGETS.flatMap(({ scenario, ceiling, target }) =>
    results.filter((r) => r.scenario === scenario).map((r) => {
      const value = r.rps / ceilings[ceiling].perSecond;
      return { scenario, instances: r.instances, connections: r.connections, ceiling, value, target, met: value >= target };
    }));
}

/** The checks of every scenario at the highest concurrency of the run (64; 4 in a smoke run). */
export function checks(results: ScenarioResult[]): Check[] {
  const top = Math.max(...results.map((r) => r.connections));
  return results.filter((r) => r.connections === top).flatMap((r) => {
    const at = { scenario: r.scenario, instances: r.instances, connections: r.connections };
    return [
      { ...at, check: 'p99 <= 4 x p50', value: `${(r.p99 / Math.max(r.p50, 1e-9)).toFixed(2)} x`, met: r.requests > 0 && r.p99 <= 4 * r.p50 },
      { ...at, check: 'no non-2xx or errors', value: `${r.non2xx} / ${r.errors + r.timeouts}`, met: r.non2xx === 0 && r.errors === 0 && r.timeouts === 0 && r.requests > 0 },
      { ...at, check: 'peak RSS <= 300 MB', value: `${r.peakRssMb.toFixed(0)} MB`, met: r.peakRssMb <= 300 },
    ] satisfies Check[];
  });
}

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);
const fixed = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

function sortResults(results: ScenarioResult[]): ScenarioResult[] {
  return [...results].sort((a, b) => a.instances - b.instances || SCENARIO_ORDER.indexOf(a.scenario) - SCENARIO_ORDER.indexOf(b.scenario) || a.connections - b.connections);
}

export function formatTable(results: ScenarioResult[]): string {
  const head = ['inst', 'scenario', 'conc', 'req/s', 'p50 ms', 'p99 ms', 'p99/p50', 'non-2xx', 'errors', 'CPU ms/req', 'peak RSS MB', 'db+redis', 'loader', 'busy', 'others', 'split'];
  const widths = [4, 21, 4, 7, 8, 8, 7, 7, 6, 10, 11, 8, 6, 4, 6, 7];
  const line = (cells: string[]) => cells.map((c, i) => (i === 1 ? pad(c, widths[i] as number) : lpad(c, widths[i] as number))).join('  ');
  const rows = sortResults(results).map((r) => line([
    String(r.instances), r.scenario, String(r.connections), fixed(r.rps, 0), fixed(r.p50, 2), fixed(r.p99, 2), fixed(r.p99 / r.p50, 1),
    String(r.non2xx), String(r.errors + r.timeouts), fixed(r.serverCpuMsPerRequest, 2), fixed(r.peakRssMb, 0),
    fixed(r.storageCpuMsPerRequest, 2), fixed(r.loaderCpuMsPerRequest, 2), `${fixed(r.machineBusy * 100, 0)}%`, `${fixed((r.othersBusy ?? NaN) * 100, 0)}%`, r.requestsByInstance.length > 1 ? r.requestsByInstance.map((n) => fixed((100 * n) / Math.max(1, r.requestsByInstance.reduce((a, b) => a + b, 0)), 0)).join('/') : '',
  ]));
  return [line(head), ...rows].join('\n');
}

export function formatCeilings(c: Ceilings): string {
  const one = (name: string, x: Ceilings['signRs256']) => `  ${pad(name, 34)} ${lpad(fixed(x.perSecond, 0), 7)}/s   (${fixed(x.cpuMsPerOp, 3)} ms CPU each)`;
  return [
    `Ceilings (separate process, ${c.inFlight} in flight, ${c.cores} cores, libuv threadpool ${c.threadpoolSize}):`,
    one('jose RS256 signatures (RSA-2048)', c.signRs256),
    one('jose RS256 verifications', c.verifyRs256),
    one('argon2id verifications (ARGON2_PARAMS)', c.argon2Verify),
  ].join('\n');
}

export function formatRatios(list: Ratio[]): string {
  return list
    .sort((a, b) => TARGETS.findIndex((t) => t.scenario === a.scenario) - TARGETS.findIndex((t) => t.scenario === b.scenario) || a.instances - b.instances || a.connections - b.connections)
    .map((r) => `  ${pad(`${r.scenario} / ${r.ceiling}`, 38)} inst ${r.instances} conc ${lpad(String(r.connections), 2)}: ${fixed(r.value, 3)}  (target >= ${r.target})  ${r.met ? 'met' : 'NOT MET'}`)
    .join('\n');
}

export function formatChecks(list: Check[]): string {
  const failed = list.filter((c) => !c.met);
  if (failed.length === 0) return `  all ${list.length} checks met`;
  return [`  ${list.length - failed.length} of ${list.length} checks met; not met:`, ...failed.map((c) => `  ${pad(c.scenario, 22)} inst ${c.instances} conc ${c.connections}: ${c.check} (${c.value})`)].join('\n');
}
