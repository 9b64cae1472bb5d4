/**
 * The interleaved rounds: per scenario, the service, its storage-free floor and the peer
 * (node-oidc-provider) one after the other, the order rotated each round, each with the
 * single-use values it consumes made just before it runs, through its own real interfaces.
 */
import type { Browser } from '../test/helpers/browser-http.ts';
import { runLoad, type ScenarioResult } from './harness.ts';
import type { LoadJob } from './load.ts';
import { peerMintCodes, peerRefreshFamilies } from './peer/mint.ts';
import { authorizePath, exchangeCode, mintCodes, refreshFamilies, SIGN_IN_USER } from './prepare.ts';
import type { ScenarioData, ScenarioName } from './scenarios.ts';
import type { Instances } from './servers.ts';

export type Target = NonNullable<ScenarioResult['target']>;

/** Which targets answer each scenario: the peer for what the issue compares, the floor for every target of a ratio. */
export const TARGETS_OF: Record<ScenarioName, Target[]> = {
  discovery: ['service'],
  jwks: ['service'],
  'client-credentials': ['service', 'floor', 'peer'],
  introspection: ['service', 'floor', 'peer'],
  'introspection-refresh': ['service'],
  userinfo: ['service', 'floor'],
  refresh: ['service', 'floor', 'peer'],
  'code-exchange': ['service', 'floor', 'peer'],
  'password-sign-in': ['service', 'floor'],
};

/** A running target and what its scenarios need from it. */
export interface TargetContext {
  target: Target;
  servers: Instances;
  /** The service's signed-in browser (codes from prompt-less authorize requests). */
  browser?: Browser;
  /** An access token of the web client: a JWT (service, floor), opaque at the peer. */
  accessToken: string;
}

export interface RoundSettings {
  connections: number;
  warmupSeconds: number;
  measureSeconds: number;
}

/** `list` rotated left by `round` places: each target goes first once every `list.length` rounds. */
export function rotate<T>(list: T[], round: number): T[] {
  const k = round % Math.max(1, list.length);
  return [...list.slice(k), ...list.slice(0, k)];
}

/** Everything a scenario consumes at a target, made just before it runs. */
async function dataFor(scenario: ScenarioName, ctx: TargetContext, settings: RoundSettings, refreshPace: number | undefined): Promise<{ data: ScenarioData; amounts?: LoadJob['amounts'] }> {
  const { connections } = settings;
  const base = ctx.servers.url;
  switch (scenario) {
    case 'refresh': {
      // Chained: each answer's refresh token is the next request's; 3 per connection outlast the phase ends.
      const count = 3 * connections;
      if (ctx.target === 'floor') return { data: { refreshTokens: Array.from({ length: count }, (_, i) => `floor-refresh-${i}`) } };
      const refreshTokens = ctx.target === 'peer' ? await peerRefreshFamilies(base, count) : await refreshFamilies(base, ctx.browser as Browser, count);
      return { data: { refreshTokens } };
    }
    case 'code-exchange': {
      // Codes are single-use and live 5 minutes: minted now, as many as this target's refresh
      // pace (the same two signatures) needs; the phases then run for that many requests. The
      // floor looks no code up but runs for as many requests too, so that every target's phase
      // ends alike: the last requests in flight, fewer and fewer, count in each one's pace.
      const pace = refreshPace ?? 200;
      const warmup = settings.warmupSeconds > 0 ? Math.max(connections, Math.ceil(pace * settings.warmupSeconds)) : 0;
      const measure = Math.max(connections, Math.ceil(pace * settings.measureSeconds));
      const amounts = { warmup, measure };
      if (ctx.target === 'floor') return { data: { codes: [] }, amounts };
      const count = warmup + measure + connections;
      const codes = ctx.target === 'peer' ? await peerMintCodes(base, count) : await mintCodes(base, ctx.browser as Browser, count);
      return { data: { codes }, amounts };
    }
    case 'password-sign-in':
      return { data: { authorizePath: authorizePath(), user: SIGN_IN_USER } };
    default:
      return { data: { accessToken: ctx.accessToken } };
  }
}

/** An access token of the web client at a target that mints none by itself (floor, peer): one code exchange. */
export async function accessTokenAt(target: Target, base: string): Promise<string> {
  const [code] = target === 'peer' ? await peerMintCodes(base, 1) : ['floor-code'];
  return (await exchangeCode(base, code as string)).access_token;
}

/** One scenario at each of its targets, in this round's order; appends to `results`. */
export async function runScenarioRound(
  scenario: ScenarioName, round: number, contexts: TargetContext[], settings: RoundSettings, results: ScenarioResult[],
): Promise<void> {
  const targets = TARGETS_OF[scenario].filter((t) => contexts.some((c) => c.target === t));
  for (const target of rotate(targets, round)) {
    const ctx = contexts.find((c) => c.target === target) as TargetContext;
    const instances = ctx.servers.pids.length;
    const pace = results.find((r) => r.scenario === 'refresh' && r.target === target && r.round === round && r.instances === instances && r.connections === settings.connections)?.rps;
    const { data, amounts } = await dataFor(scenario, ctx, settings, pace);
    const job: LoadJob = { scenario, url: ctx.servers.url, connections: settings.connections, warmupSeconds: settings.warmupSeconds, measureSeconds: settings.measureSeconds, data, ...(amounts ? { amounts } : {}) };
    const result: ScenarioResult = { ...(await runLoad(job, ctx.servers)), target, round };
    results.push(result);
    console.log(`  r${round + 1} ${instances} inst  ${target.padEnd(7)} ${scenario.padEnd(18)} c${String(settings.connections).padEnd(3)} ${result.rps.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(1)} ms  p99 ${result.p99.toFixed(1)} ms  non-2xx ${result.non2xx}  errors ${result.errors + result.timeouts}`);
  }
}
