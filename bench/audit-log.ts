/**
 * `npm run bench -- --audit-log`: what keeping the audit log costs the hot path. Two instances in
 * the production shape side by side on one database and one Redis, the same but for the audit
 * log: on (the defaults: 90 days, token_issued excluded) and off (IDP_AUDIT_RETENTION=0). Code
 * exchange and refresh run at concurrency 64 against each in turn, the order alternating over
 * the rounds (interleaved, so that the machine's drift falls on both), the tables vacuumed before
 * each phase. Target: on ÷ off >= 0.95 (the median of the per-round ratios), and the audit log
 * rows each phase wrote.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createEnvironment, type ScenarioResult } from './harness.ts';
import { median } from './median.ts';
import { exchangeCode, mintCodes, seed, signIn } from './prepare.ts';
import { runScenarioRound, type TargetContext } from './rounds.ts';
import type { ScenarioName } from './scenarios.ts';
import { freePort, productionEnv, startInstances } from './servers.ts';

const SCENARIOS: ScenarioName[] = ['refresh', 'code-exchange'];
const TARGET = 0.95;
type Label = 'on' | 'off';

export interface AuditLogBenchOptions {
  rounds: number;
  measureSeconds: number;
}

async function eventRows(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
  return rows[0]?.n ?? 0;
}

export async function runAuditLogBench(options: AuditLogBenchOptions = { rounds: 3, measureSeconds: 5 }): Promise<void> {
  const env = await createEnvironment();
  const dir = mkdtempSync(join(tmpdir(), 'idp-bench-audit-log-'));
  const db = new pg.Client({ connectionString: env.databaseUrl });
  await db.connect();
  const contexts = new Map<Label, TargetContext>();
  try {
    const common = { DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, IDP_SECRET: env.secret };
    await seed(productionEnv(await freePort(), common));
    for (const label of ['on', 'off'] as const) {
      const port = await freePort();
      const servers = await startInstances(1, productionEnv(port, { ...common, ...(label === 'off' ? { IDP_AUDIT_RETENTION: '0' } : {}) }), port, dir, `audit-${label}`);
      const browser = await signIn(servers.url);
      const [code] = await mintCodes(servers.url, browser, 1);
      contexts.set(label, { target: 'service', servers, browser, accessToken: (await exchangeCode(servers.url, code as string)).access_token });
    }
    const settings = { connections: 64, warmupSeconds: 1, measureSeconds: options.measureSeconds };
    console.log('  warm-up of both (not counted):');
    for (const label of ['on', 'off'] as const) {
      for (const scenario of SCENARIOS) await runScenarioRound(scenario, 100 + (label === 'on' ? 1 : 0), [contexts.get(label) as TargetContext], { ...settings, measureSeconds: 2 }, []);
    }
    const results: Array<ScenarioResult & { label: Label; realRound: number; rowsWritten: number }> = [];
    for (let round = 0; round < options.rounds; round++) {
      const order: Label[] = round % 2 === 0 ? ['off', 'on'] : ['on', 'off'];
      for (const label of order) {
        const slot = round * 2 + (label === 'on' ? 1 : 0);
        await db.query('VACUUM (ANALYZE) refresh_token_families, refresh_tokens, events');
        for (const scenario of SCENARIOS) {
          const before = await eventRows(db);
          const phase: ScenarioResult[] = [];
          await runScenarioRound(scenario, slot, [contexts.get(label) as TargetContext], settings, phase);
          const rowsWritten = (await eventRows(db)) - before;
          results.push(...phase.map((r) => ({ ...r, label, realRound: round, rowsWritten })));
        }
      }
    }
    console.log(`\n${options.rounds} rounds at concurrency 64, audit log on ÷ off (IDP_AUDIT_RETENTION=0); verdict: the median of the per-round ratios:`);
    for (const scenario of SCENARIOS) {
      const of = (label: Label, round: number) => results.find((r) => r.scenario === scenario && r.label === label && r.realRound === round);
      const rps = (label: Label, round: number) => of(label, round)?.rps ?? Number.NaN;
      const ratios = Array.from({ length: options.rounds }, (_, i) => rps('on', i) / rps('off', i));
      const ratio = median(ratios);
      const rows = (label: Label) => results.filter((r) => r.scenario === scenario && r.label === label).reduce((sum, r) => sum + r.rowsWritten, 0);
      console.log(`  ${scenario.padEnd(14)} median req/s off ${median(ratios.map((_, i) => rps('off', i))).toFixed(0).padStart(5)}  on ${median(ratios.map((_, i) => rps('on', i))).toFixed(0).padStart(5)}  `
        + `rounds ${ratios.map((r) => r.toFixed(2)).join(' ')}  ratio ${ratio.toFixed(3)}  ${ratio >= TARGET ? 'met' : 'NOT MET'} (target >= ${TARGET}); audit rows written: on ${rows('on')}, off ${rows('off')}`);
    }
    console.log('  CPU per answer, ms (medians over the rounds), off -> on: instance | PostgreSQL');
    for (const scenario of SCENARIOS) {
      const cpu = (label: Label, pick: (r: ScenarioResult) => number) => median(results.filter((r) => r.scenario === scenario && r.label === label).map(pick)).toFixed(3);
      const pair = (pick: (r: ScenarioResult) => number) => `${cpu('off', pick)} -> ${cpu('on', pick)}`;
      console.log(`  ${scenario.padEnd(14)} ${pair((r) => r.serverCpuMsPerRequest)} | ${pair((r) => r.postgresCpuMsPerRequest)}`);
    }
  } finally {
    for (const ctx of contexts.values()) await ctx.servers.stop();
    await db.end();
    await env.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}
