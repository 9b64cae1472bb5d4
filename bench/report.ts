/**
 * The bench's verdicts and its tables: each measurement's figures; per scenario, the service
 * against its floor and the peer, round by round, with the medians of the per-round ratios and
 * the targets; start-up; the checks the service must pass at concurrency 64.
 */
import type { ScenarioResult } from './harness.ts';
import type { ScenarioName } from './scenarios.ts';
import type { Startup } from './startup.ts';

/** Table order (the order). */
export const SCENARIO_ORDER: ScenarioName[] = [
  'discovery', 'jwks', 'client-credentials', 'code-exchange', 'refresh', 'introspection', 'introspection-refresh', 'userinfo', 'password-sign-in',
];
const TARGET_ORDER = ['service', 'floor', 'peer'];

export interface Check {
  scenario: ScenarioName;
  instances: number;
  connections: number;
  check: 'p99 <= 4 x p50' | 'no non-2xx or errors' | 'peak RSS <= 300 MB';
  value: string;
  met: boolean;
}

/** Issue 18's targets: medians of the per-round ratios, one instance, concurrency 64. */
export const FLOOR_TARGETS: Partial<Record<ScenarioName, number>> = {
  'client-credentials': 0.95, introspection: 0.9, userinfo: 0.9, refresh: 0.8, 'code-exchange': 0.8, 'password-sign-in': 0.85,
};
export const PEER_TARGETS: Partial<Record<ScenarioName, number>> = {
  'client-credentials': 1.2, introspection: 1.2, refresh: 1.2, 'code-exchange': 1.2,
};
const NOTES: Partial<Record<ScenarioName, string>> = {
  introspection: 'peer: an opaque token (it introspects no JWT)',
  'code-exchange': 'floor: two signatures, no code looked up',
  refresh: 'floor: two signatures, no token looked up',
  'password-sign-in': 'sequences/s; floor: one argon2id verification',
};

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length === 0 ? NaN : sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

export interface Versus {
  /** service ÷ other, per round (NaN where the other did not answer in that round). */
  perRound: number[];
  median: number;
  target: number | undefined;
  met: boolean | undefined;
}

export interface Comparison {
  scenario: ScenarioName;
  /** Medians over the rounds of good answers per second. */
  service: number;
  floor: number | undefined;
  peer: number | undefined;
  /** Medians of CPU ms per request: the service's processes, its PostgreSQL backends, Redis. */
  serviceCpuMs: number;
  postgresCpuMs: number;
  redisCpuMs: number;
  floorCpuMs: number | undefined;
  peerCpuMs: number | undefined;
  /** Medians of the main thread's CPU ms per request, the service's and its floor's. */
  serviceMainMs: number;
  floorMainMs: number | undefined;
  vsFloor: Versus | undefined;
  vsPeer: Versus | undefined;
  note: string | undefined;
}

function versus(own: ScenarioResult[], other: ScenarioResult[], target: number | undefined): Versus | undefined {
  if (other.length === 0) return undefined;
  const perRound = own.map((r) => r.rps / (other.find((o) => o.round === r.round)?.rps ?? NaN));
  const value = median(perRound.filter(Number.isFinite));
  return { perRound, median: value, target, met: target === undefined ? undefined : value >= target };
}

/** Per scenario, the one-instance measurements at `connections`, service against floor and peer. */
export function comparisons(results: ScenarioResult[], connections: number): Comparison[] {
  const at = results.filter((r) => r.instances === 1 && r.connections === connections);
  const of = (scenario: ScenarioName, target: string) => at.filter((r) => r.scenario === scenario && (r.target ?? 'service') === target).sort((a, b) => (a.round ?? 0) - (b.round ?? 0));
  const med = (list: ScenarioResult[], field: 'rps' | 'serverCpuMsPerRequest' | 'mainThreadCpuMsPerRequest') => (list.length > 0 ? median(list.map((r) => r[field])) : undefined);
  return SCENARIO_ORDER.filter((s) => of(s, 'service').length > 0).map((scenario) => {
    const [service, floor, peer] = TARGET_ORDER.map((t) => of(scenario, t)) as [ScenarioResult[], ScenarioResult[], ScenarioResult[]];
    return {
      scenario,
      service: med(service, 'rps') as number,
      floor: med(floor, 'rps'),
      peer: med(peer, 'rps'),
      serviceCpuMs: med(service, 'serverCpuMsPerRequest') as number,
      postgresCpuMs: median(service.map((r) => r.postgresCpuMsPerRequest)),
      redisCpuMs: median(service.map((r) => r.redisCpuMsPerRequest)),
      floorCpuMs: med(floor, 'serverCpuMsPerRequest'),
      peerCpuMs: med(peer, 'serverCpuMsPerRequest'),
      serviceMainMs: med(service, 'mainThreadCpuMsPerRequest') as number,
      floorMainMs: med(floor, 'mainThreadCpuMsPerRequest'),
      vsFloor: versus(service, floor, FLOOR_TARGETS[scenario]),
      vsPeer: versus(service, peer, PEER_TARGETS[scenario]),
      note: NOTES[scenario],
    };
  });
}

/** The checks of every scenario at the highest concurrency of the run (64; 4 in a smoke run). */
export function checks(results: ScenarioResult[]): Check[] {
  const top = Math.max(...results.map((r) => r.connections));
  return results.filter((r) => r.connections === top && (r.target ?? 'service') === 'service').flatMap((r) => {
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
  return [...results].sort((a, b) => a.instances - b.instances || SCENARIO_ORDER.indexOf(a.scenario) - SCENARIO_ORDER.indexOf(b.scenario) || a.connections - b.connections
    || TARGET_ORDER.indexOf(a.target ?? 'service') - TARGET_ORDER.indexOf(b.target ?? 'service') || (a.round ?? 0) - (b.round ?? 0));
}

export function formatTable(results: ScenarioResult[]): string {
  const head = ['inst', 'scenario', 'target', 'rnd', 'conc', 'req/s', 'p50 ms', 'p99 ms', 'p99/p50', 'non-2xx', 'errors', 'CPU ms/req', 'main', 'peak RSS MB', 'pg', 'redis', 'loader', 'busy', 'others', 'split'];
  const widths = [4, 21, 7, 3, 4, 7, 8, 8, 7, 7, 6, 10, 5, 11, 5, 5, 6, 4, 6, 7];
  const line = (cells: string[]) => cells.map((c, i) => (i === 1 ? pad(c, widths[i] as number) : lpad(c, widths[i] as number))).join('  ');
  const rows = sortResults(results).map((r) => line([
    String(r.instances), r.scenario, r.target ?? 'service', r.round === undefined ? '' : String(r.round + 1), String(r.connections), fixed(r.rps, 0), fixed(r.p50, 2), fixed(r.p99, 2), fixed(r.p99 / r.p50, 1),
    String(r.non2xx), String(r.errors + r.timeouts), fixed(r.serverCpuMsPerRequest, 2), fixed(r.mainThreadCpuMsPerRequest ?? NaN, 3), fixed(r.peakRssMb, 0),
    fixed(r.postgresCpuMsPerRequest ?? NaN, 2), fixed(r.redisCpuMsPerRequest ?? r.storageCpuMsPerRequest, 2), fixed(r.loaderCpuMsPerRequest, 2), `${fixed(r.machineBusy * 100, 0)}%`, `${fixed((r.othersBusy ?? NaN) * 100, 0)}%`, r.requestsByInstance.length > 1 ? r.requestsByInstance.map((n) => fixed((100 * n) / Math.max(1, r.requestsByInstance.reduce((a, b) => a + b, 0)), 0)).join('/') : '',
  ]));
  return [line(head), ...rows].join('\n');
}

function formatVersus(v: Versus | undefined): string[] {
  if (!v) return ['', '', '', ''];
  return [v.perRound.map((x) => fixed(x, 2)).join(' '), fixed(v.median, 2), v.target === undefined ? '' : `>= ${v.target}`, v.met === undefined ? '' : v.met ? 'pass' : 'FAIL'];
}

export function formatComparisons(list: Comparison[]): string {
  const head = ['scenario', 'service', 'floor', 'peer', 'svc/floor rounds', 'median', 'target', '', 'svc/peer rounds', 'median', 'target', '', 'note'];
  const widths = [18, 7, 7, 7, 16, 6, 7, 4, 16, 6, 6, 4, 0];
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 || i >= 12 ? pad(c, widths[i] as number) : lpad(c, widths[i] as number))).join('  ').trimEnd();
  const rate = (x: number | undefined) => (x === undefined ? '' : fixed(x, 0));
  return [line(head), ...list.map((c) => line([
    c.scenario, rate(c.service), rate(c.floor), rate(c.peer), ...formatVersus(c.vsFloor), ...formatVersus(c.vsPeer), c.note ?? '',
  ]))].join('\n');
}

/** CPU per request (medians over the rounds): what sizing needs. */
export function formatCapacity(list: Comparison[]): string {
  const head = ['scenario', 'service ms', 'postgres ms', 'redis ms', 'floor ms', 'peer ms', 'service main', 'floor main'];
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? pad(c, 18) : lpad(c, 11))).join('  ');
  const ms = (x: number | undefined, digits = 2) => (x === undefined || !Number.isFinite(x) ? '' : fixed(x, digits));
  return [line(head), ...list.map((c) => line([
    c.scenario, ms(c.serviceCpuMs), ms(c.postgresCpuMs), ms(c.redisCpuMs), ms(c.floorCpuMs), ms(c.peerCpuMs), ms(c.serviceMainMs, 3), ms(c.floorMainMs, 3),
  ]))].join('\n');
}

export function formatStartup(s: Startup): string {
  const runs = s.runs.map((r) => `${fixed(r.readyMs, 0)} ms / ${fixed(r.peakRssMbAtReady, 0)} MB`).join(', ');
  return `Start-up of a new instance on the migrated database, spawn to /readyz 200: median ${fixed(s.medianReadyMs, 0)} ms, peak RSS (VmHWM) at ready ${fixed(s.medianPeakRssMbAtReady, 0)} MB  (${runs})`;
}

export function formatChecks(list: Check[]): string {
  const failed = list.filter((c) => !c.met);
  if (failed.length === 0) return `  all ${list.length} checks met`;
  return [`  ${list.length - failed.length} of ${list.length} checks met; not met:`, ...failed.map((c) => `  ${pad(c.scenario, 22)} inst ${c.instances} conc ${c.connections}: ${c.check} (${c.value})`)].join('\n');
}
