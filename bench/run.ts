/**
 * `npm run bench`: the orchestrator. Starts the service in its production shape, its
 * storage-free floor (bench/floors/) and the peer, node-oidc-provider (bench/peer/), and runs
 * every scenario against each target that answers it in interleaved rounds (three, the order
 * rotated each round), one instance at concurrency 64; then, once, one instance per core. Also
 * measures a new instance's start-up to ready and its peak memory. The database holds background
 * rows, analyzed, before anything starts (bench/scale-seed.ts, BACKGROUND). Prints the table with the
 * per-round ratios service / floor and service / peer, their medians and the targets, and writes
 * the same as JSON under bench/results/.
 *
 *   npm run bench                  # the standard run (about 9 minutes on 2 cores)
 *   npm run bench -- --smoke       # one round, ~0.5 s per measurement, concurrency 4 (the smoke test)
 *   npm run bench -- --scale       # refresh and introspection on an empty vs a large database
 *   npm run bench -- --webhooks    # code exchange and refresh with a token_issued webhook vs without; delivery rate
 *   npm run bench -- --audit-log   # code exchange and refresh with the audit log on vs off, two instances interleaved
 *   npm run bench -- --admin       # the administration API's user list, page by page through 100,000 users
 *   npm run bench -- --import      # idp import of a Keycloak realm export: 10,000 and 100,000 users, seconds and peak RSS
 *   npm run bench -- --help        # the options; a mistyped one stops the run with one line naming it
 *   options: --out FILE (JSON path), --keep-logs (keep the servers' log files); for experiments:
 *   --only refresh,userinfo  --rounds 1  --concurrency 16  --no-peer  --no-floor  --no-per-core
 *   (IDP_BENCH_SERVER_NODE_ARGS="--cpu-prof ..." adds Node.js flags to the instances, floor and peer)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { describeParseError } from '../src/cli/args.ts';
import { createEnvironment, sourceState, type Environment, type ScenarioResult } from './harness.ts';
import { exchangeCode, mintCodes, seed, signIn } from './prepare.ts';
import { checks, comparisons, formatCapacity, formatChecks, formatComparisons, formatStartup, formatTable } from './report.ts';
import { accessTokenAt, runScenarioRound, type RoundSettings, type Target, type TargetContext } from './rounds.ts';
import { runAdminBench } from './admin-api.ts';
import { runImportBench } from './import.ts';
import { runScale } from './scale.ts';
import { runWebhookBench } from './webhooks.ts';
import { runAuditLogBench } from './audit-log.ts';
import { BACKGROUND, seedRows, type SeedRows } from './scale-seed.ts';
import type { ScenarioName } from './scenarios.ts';
import { freePort, productionEnv, ROOT, startInstances } from './servers.ts';
import { startSideServer } from './side-servers.ts';
import { measureStartup, type Startup } from './startup.ts';

export interface Settings {
  mode: 'standard' | 'smoke';
  scenarios: ScenarioName[];
  /** Warm-up of each measurement in the first round, and in the later ones (the processes are warm by then). */
  warmupSeconds: number;
  laterWarmupSeconds: number;
  measureSeconds: number;
  connections: number;
  rounds: number;
  /** Targets besides the service. */
  compare: Array<Exclude<Target, 'service'>>;
  /** After the rounds, one pass of the service alone with one instance per core (0: none). */
  perCoreInstances: number;
  startupRuns: number;
  /** Rows in the database, analyzed, before anything is measured (bench/scale-seed.ts, BACKGROUND). */
  background: SeedRows;
}

/** Run order: refresh before code exchange, whose codes are minted to refresh's measured pace. */
export const RUN_ORDER: ScenarioName[] = ['discovery', 'jwks', 'client-credentials', 'introspection', 'userinfo', 'refresh', 'code-exchange', 'password-sign-in'];

export function settingsFor(smoke: boolean): Settings {
  const perCore = availableParallelism() > 1 ? availableParallelism() : 0;
  return smoke
    ? { mode: 'smoke', scenarios: RUN_ORDER, warmupSeconds: 0, laterWarmupSeconds: 0, measureSeconds: 0.5, connections: 4, rounds: 1, compare: ['floor', 'peer'], perCoreInstances: 0, startupRuns: 1, background: { clients: 10, users: 100, families: 1_000 } }
    : { mode: 'standard', scenarios: RUN_ORDER, warmupSeconds: 2, laterWarmupSeconds: 1, measureSeconds: 5, connections: 64, rounds: 3, compare: ['floor', 'peer'], perCoreInstances: perCore, startupRuns: 3, background: BACKGROUND };
}

/** The service's instances with a signed-in browser and a user's access token. */
async function serviceContext(instances: number, env: Environment, logDir: string): Promise<TargetContext> {
  const port = await freePort();
  const serverEnv = productionEnv(port, { DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, IDP_SECRET: env.secret });
  const servers = await startInstances(instances, serverEnv, port, logDir, `row-${instances}`);
  try {
    const browser = await signIn(servers.url);
    const [code] = await mintCodes(servers.url, browser, 1);
    return { target: 'service', servers, browser, accessToken: (await exchangeCode(servers.url, code as string)).access_token };
  } catch (error) {
    await servers.stop();
    throw error;
  }
}

async function withContexts(instances: number, compare: Settings['compare'], env: Environment, logDir: string, body: (contexts: TargetContext[]) => Promise<void>): Promise<void> {
  const contexts: TargetContext[] = [];
  try {
    contexts.push(await serviceContext(instances, env, logDir));
    for (const target of compare) {
      const servers = await startSideServer(target, logDir, env.redisUrl);
      contexts.push({ target, servers, accessToken: '' });
      (contexts.at(-1) as TargetContext).accessToken = await accessTokenAt(target, servers.url);
    }
    await body(contexts);
  } finally {
    for (const ctx of contexts) await ctx.servers.stop();
  }
}

async function runRounds(env: Environment, settings: Settings, logDir: string, results: ScenarioResult[]): Promise<void> {
  await withContexts(1, settings.compare, env, logDir, async (contexts) => {
    for (let round = 0; round < settings.rounds; round++) {
      const phase: RoundSettings = { connections: settings.connections, warmupSeconds: round === 0 ? settings.warmupSeconds : settings.laterWarmupSeconds, measureSeconds: settings.measureSeconds };
      for (const scenario of settings.scenarios) await runScenarioRound(scenario, round, contexts, phase, results);
    }
  });
  if (settings.perCoreInstances > 1) {
    await withContexts(settings.perCoreInstances, [], env, logDir, async (contexts) => {
      const phase: RoundSettings = { connections: settings.connections, warmupSeconds: settings.laterWarmupSeconds, measureSeconds: settings.measureSeconds };
      for (const scenario of settings.scenarios) await runScenarioRound(scenario, 0, contexts, phase, results);
    });
  }
}

export interface BenchReport {
  mode: Settings['mode'];
  startedAt: string;
  seconds: number;
  machine: { cores: number; node: string; loadavgBefore: number[]; loadavgAfter: number[] };
  source: ReturnType<typeof sourceState>;
  settings: Settings;
  /** A new instance on the migrated database: time to /readyz 200 and peak memory. */
  startup: Startup;
  results: ScenarioResult[];
  comparisons: ReturnType<typeof comparisons>;
  checks: ReturnType<typeof checks>;
}

export async function runStandard(settings: Settings, options: { keepLogs: boolean }): Promise<BenchReport> {
  const started = Date.now();
  const loadavgBefore = loadavg();
  console.log(`bench (${settings.mode}): ${settings.rounds} round(s), concurrency ${settings.connections}, service vs ${settings.compare.join(' and ') || 'nothing'}`);
  const env = await createEnvironment();
  const logDir = mkdtempSync(join(tmpdir(), 'idp-bench-logs-'));
  const results: ScenarioResult[] = [];
  let startup: Startup;
  try {
    const port = await freePort();
    const serverEnv = productionEnv(port, { DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, IDP_SECRET: env.secret });
    await seed(serverEnv);
    const rows = settings.background;
    const background = await seedRows(env.databaseUrl, rows, () => {});
    console.log(`Background: ${rows.families} refresh token families, ${rows.users} users, ${rows.clients} clients, analyzed (${background.totalSeconds.toFixed(1)} s)`);
    startup = await measureStartup(settings.startupRuns, serverEnv, port, logDir);
    console.log(formatStartup(startup));
    await runRounds(env, settings, logDir, results);
  } finally {
    await env.cleanup();
    if (options.keepLogs) console.log(`logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
  return {
    mode: settings.mode, startedAt: new Date(started).toISOString(), seconds: (Date.now() - started) / 1000,
    machine: { cores: availableParallelism(), node: process.version, loadavgBefore, loadavgAfter: loadavg() },
    source: sourceState(), settings, startup, results, comparisons: comparisons(results, settings.connections), checks: checks(results),
  };
}

export function printReport(report: BenchReport): void {
  console.log(`\n${formatTable(report.results)}`);
  console.log(`\nService against its floor and the peer (one instance, concurrency ${report.settings.connections}, ${report.settings.rounds} interleaved round(s); the targets):\n${formatComparisons(report.comparisons)}`);
  console.log(`\nCPU per request, medians over the rounds (the service's processes, this database's PostgreSQL backends, the Redis server; the floor's processes; the main threads alone):\n${formatCapacity(report.comparisons)}`);
  console.log(`\n${formatStartup(report.startup)}`);
  console.log(`\nChecks of the service at concurrency ${report.settings.connections}:\n${formatChecks(report.checks)}`);
  console.log(`\nWhole run: ${report.seconds.toFixed(0)} s (load average ${report.machine.loadavgBefore[0]?.toFixed(1)} before, ${report.machine.loadavgAfter[0]?.toFixed(1)} after)`);
}

function writeJson(report: unknown, out: string | undefined, prefix: string): string {
  const file = out ?? join(ROOT, 'bench/results', `${prefix}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

const USAGE = 'usage: npm run bench [-- --smoke | --scale | --webhooks | --audit-log [--rounds N] | --admin | --import] [--out FILE] [--keep-logs] [--only SCENARIO,...] [--rounds N] [--concurrency N] [--no-peer] [--no-floor] [--no-per-core]';

type BenchCommand = { kind: 'help' } | { kind: 'webhooks' } | { kind: 'audit-log'; rounds: number } | { kind: 'scale'; out?: string; keepLogs: boolean } | { kind: 'admin'; out?: string; keepLogs: boolean } | { kind: 'import'; out?: string } | { kind: 'standard'; settings: Settings; out?: string; keepLogs: boolean };

function positiveInteger(name: string, value: string): number {
  if (!/^[1-9][0-9]{0,5}$/.test(value)) throw new Error(`--${name} must be a positive whole number, not '${value}'`);
  return Number(value);
}

function scenarioList(value: string): ScenarioName[] {
  const names = value.split(',').map((x) => x.trim()).filter((x) => x !== '');
  const unknown = names.filter((n) => !(RUN_ORDER as string[]).includes(n));
  if (unknown.length > 0) throw new Error(`--only: unknown scenario ${unknown.map((n) => `'${n}'`).join(', ')} (one of ${RUN_ORDER.join(', ')})`);
  if (names.length === 0) throw new Error(`--only names no scenario (one of ${RUN_ORDER.join(', ')})`);
  return RUN_ORDER.filter((s) => names.includes(s));
}

/** Options of the standard and smoke runs that --scale, with its fixed scenarios and targets, has no use for. */
const STANDARD_ONLY = ['only', 'rounds', 'concurrency', 'no-peer', 'no-floor', 'no-per-core'] as const;

/** The command line, read into what to run; a mistake throws one line naming it. */
function readBenchArgs(args: string[]): BenchCommand {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        help: { type: 'boolean', short: 'h' }, smoke: { type: 'boolean' }, scale: { type: 'boolean' }, webhooks: { type: 'boolean' }, 'audit-log': { type: 'boolean' }, admin: { type: 'boolean' }, import: { type: 'boolean' }, out: { type: 'string' }, 'keep-logs': { type: 'boolean' },
        only: { type: 'string' }, rounds: { type: 'string' }, concurrency: { type: 'string' },
        'no-peer': { type: 'boolean' }, 'no-floor': { type: 'boolean' }, 'no-per-core': { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new Error(describeParseError(error), { cause: error });
  }
  if (values.help) return { kind: 'help' };
  const keepLogs = values['keep-logs'] === true;
  if (values.webhooks) {
    if (values.smoke || values.scale) throw new Error('--webhooks is a run of its own; give it alone');
    return { kind: 'webhooks' };
  }
  if (values['audit-log']) {
    if (values.smoke || values.scale || values.webhooks || values.admin || values.import) throw new Error('--audit-log is a run of its own; give it alone');
    return { kind: 'audit-log', rounds: values.rounds === undefined ? 3 : positiveInteger('rounds', values.rounds) };
  }
  if (values.import) {
    if (values.smoke || values.scale || values.admin || values.webhooks) throw new Error('--import is a run of its own; give it alone');
    return { kind: 'import', out: values.out };
  }
  if (values.admin) {
    if (values.smoke || values.scale) throw new Error('--admin, --scale and --smoke are different runs; choose one');
    const standardOnly = STANDARD_ONLY.find((name) => values[name] !== undefined);
    if (standardOnly) throw new Error(`--${standardOnly} does not apply to --admin, which measures its own fixed set`);
    return { kind: 'admin', out: values.out, keepLogs };
  }
  if (values.scale) {
    if (values.smoke) throw new Error('--scale and --smoke are two different runs; choose one');
    const standardOnly = STANDARD_ONLY.find((name) => values[name] !== undefined);
    if (standardOnly) throw new Error(`--${standardOnly} does not apply to --scale, which measures its own fixed set`);
    return { kind: 'scale', out: values.out, keepLogs };
  }
  const settings = settingsFor(values.smoke === true);
  if (values.only !== undefined) settings.scenarios = scenarioList(values.only);
  if (values.rounds !== undefined) settings.rounds = positiveInteger('rounds', values.rounds);
  if (values.concurrency !== undefined) settings.connections = positiveInteger('concurrency', values.concurrency);
  if (values['no-peer']) settings.compare = settings.compare.filter((t) => t !== 'peer');
  if (values['no-floor']) settings.compare = settings.compare.filter((t) => t !== 'floor');
  if (values['no-per-core']) settings.perCoreInstances = 0;
  return { kind: 'standard', settings, out: values.out, keepLogs };
}

if (import.meta.main) {
  let command: BenchCommand;
  try {
    command = readBenchArgs(process.argv.slice(2));
  } catch (error) {
    console.error(`bench: ${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
  if (command.kind === 'help') {
    console.log(USAGE);
  } else if (command.kind === 'webhooks') {
    await runWebhookBench();
  } else if (command.kind === 'audit-log') {
    await runAuditLogBench({ rounds: command.rounds, measureSeconds: 5 });
  } else if (command.kind === 'admin') {
    const report = await runAdminBench({ keepLogs: command.keepLogs });
    console.log(`\nJSON: ${writeJson(report, command.out, 'admin')}`);
  } else if (command.kind === 'import') {
    console.log(`\nJSON: ${writeJson(await runImportBench(), command.out, 'import')}`);
  } else if (command.kind === 'scale') {
    const report = await runScale({ keepLogs: command.keepLogs });
    console.log(`\nJSON: ${writeJson(report, command.out, 'scale')}`);
  } else {
    const report = await runStandard(command.settings, { keepLogs: command.keepLogs });
    printReport(report);
    console.log(`\nJSON: ${writeJson(report, command.out, report.mode)}`);
  }
}
