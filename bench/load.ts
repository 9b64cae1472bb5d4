/**
 * The load generator, in a process of its own (forked by bench/run.ts, talking over IPC): runs
 * one scenario with autocannon, a warm-up first, then tells the orchestrator it is about to
 * measure (so the servers' CPU time is read at that moment), waits for `go`, measures and
 * reports JSON. Messages: in {type:'job', job}, {type:'go'}; out {type:'measuring'},
 * {type:'result', result} or {type:'error', message}.
 */
import autocannon, { type Result } from 'autocannon';
import { buildScenario, newTally, type Scenario, type ScenarioData, type ScenarioName } from './scenarios.ts';

export interface LoadJob {
  scenario: ScenarioName;
  url: string;
  connections: number;
  warmupSeconds: number;
  measureSeconds: number;
  /** For scenarios that consume single-use values: requests per phase instead of a duration. */
  amounts?: { warmup: number; measure: number };
  data: ScenarioData;
}

export interface PhaseResult {
  /** Good answers: 200 with the expected body, or completed sign-ins. */
  requests: number;
  /** Good answers per second. */
  rps: number;
  /** Latency percentiles of good answers (whole sign-ins for password-sign-in), ms. */
  p50: number;
  p99: number;
  max: number;
  /** Answers with an unexpected status: non-2xx (for the sign-in pages, other than their redirects). */
  non2xx: number;
  /** Expected status but a wrong body, plus socket errors and timeouts. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Every HTTP response (three per sign-in). */
  responses: number;
  seconds: number;
  /** CPU time of this load process during the phase, ms. */
  loaderCpuMs: number;
}

export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** One autocannon run. The scenario (and its pools of single-use values) lives across phases. */
async function runPhase(job: LoadJob, scenario: Scenario, seconds: number, amount: number | undefined): Promise<PhaseResult> {
  const { tally } = scenario;
  Object.assign(tally, newTally());
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon(
      { ...scenario.options, url: job.url, connections: job.connections, timeout: 30, ...(amount ? { amount } : { duration: seconds }) },
      (error, res) => (error ? reject(error) : resolve(res)),
    );
    if (scenario.perResponse) {
      instance.on('response', (_client, status, _bytes, time) => {
        if (status !== 200) return;
        tally.good += 1;
        tally.latencies.push(time);
      });
    }
  });
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([k, v]) => [k, v.count]));
  const responses = Object.values(statusCodes).reduce((a, b) => a + b, 0);
  const unexpected = scenario.perResponse ? responses - (statusCodes['200'] ?? 0) : tally.unexpected;
  const good = Math.max(0, tally.good - (scenario.perResponse ? tally.bad : 0));
  const sorted = tally.latencies.sort((a, b) => a - b);
  return {
    requests: good,
    rps: good / elapsed,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? 0,
    non2xx: unexpected,
    errors: tally.bad + result.errors,
    timeouts: result.timeouts,
    statusCodes,
    responses,
    seconds: elapsed,
    loaderCpuMs: (cpu.user + cpu.system) / 1000,
  };
}

function waitFor(type: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = (message: { type?: string }) => {
      if (message.type !== type) return;
      process.off('message', listener);
      resolve();
    };
    process.on('message', listener);
  });
}

async function runJob(job: LoadJob): Promise<PhaseResult> {
  // Single-use values are handed out in order across both phases: the warm-up takes the first ones.
  const scenario = buildScenario(job.scenario, job.data, newTally());
  if (job.warmupSeconds > 0) await runPhase(job, scenario, job.warmupSeconds, job.amounts?.warmup);
  const go = waitFor('go');
  process.send?.({ type: 'measuring' });
  await go;
  return runPhase(job, scenario, job.measureSeconds, job.amounts?.measure);
}

if (import.meta.main) {
  process.once('message', (message: { type?: string; job?: LoadJob }) => {
    if (message.type !== 'job' || !message.job) return;
    runJob(message.job).then(
      (result) => process.send?.({ type: 'result', result }, () => process.disconnect()),
      (error: unknown) => process.send?.({ type: 'error', message: error instanceof Error ? error.stack : String(error) }, () => process.disconnect()),
    );
  });
}
