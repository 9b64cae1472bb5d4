/**
 * `npm run bench -- --webhooks`: the cost of the outbox on the hot path, and the delivery rate.
 * One instance in the production shape, one database; an HTTPS receiver on loopback (a
 * certificate made for the run, trusted by the instance through NODE_EXTRA_CA_CERTS; loopback
 * allowed with IDP_WEBHOOK_ALLOWED_NETWORKS). Code exchange and refresh run at concurrency 64
 * with an endpoint subscribed to `token_issued` (every request writes an event and a delivery)
 * and without (the endpoint disabled), alternating over three rounds after a warm-up phase with
 * it that is not counted, the tables vacuumed before each phase; after each subscribed
 * phase the backlog is left to drain, and the events delivered per second end to end (from the
 * phase's start to the last delivery) are reported, and the CPU per answer of the instance, its
 * main thread and PostgreSQL with and without (steadier than the rates on a shared machine).
 * Target: with ÷ without >= 0.9 (the median of the per-round ratios). Printed beside it: the CPU
 * of a bare HTTPS request of an event's size (bench/bare-posts.ts), and the ratio it would leave
 * if it were all that delivering an event cost.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createEnvironment, type ScenarioResult } from './harness.ts';
import { median } from './median.ts';
import { exchangeCode, mintCodes, seed, signIn } from './prepare.ts';
import { runScenarioRound, type TargetContext } from './rounds.ts';
import type { ScenarioName } from './scenarios.ts';
import { freePort, productionEnv, ROOT, startInstances } from './servers.ts';

const SCENARIOS: ScenarioName[] = ['refresh', 'code-exchange'];
const ROUNDS = 3;
const TARGET = 0.9;
type Label = 'with' | 'without';

function selfSignedCertificate(dir: string): { key: string; cert: string } {
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert,
    '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  return { key, cert };
}

function idp(env: Record<string, string>, ...args: string[]): string {
  return execFileSync(process.execPath, [join(ROOT, 'bin/idp.js'), ...args, '--json'], { env: { ...env, LOG_LEVEL: 'warn' }, encoding: 'utf8' });
}

/** CPU time of this process (the receiver's, mostly) since `since`, ms. */
const ownCpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/**
 * The floor under an event's delivery: a bare HTTPS request of an event's size, over keep-alive
 * connections, from a process that does nothing else (bench/bare-posts.ts), to this receiver.
 * CPU per request of the sender and of the receiver (this process), ms.
 */
async function bareRequestCost(url: string, cert: string): Promise<{ sender: number; receiver: number }> {
  const count = 4000;
  const since = process.cpuUsage();
  const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, 'bench/bare-posts.ts'), url, String(count), '16'], { env: { ...process.env, NODE_EXTRA_CA_CERTS: cert } });
  return { sender: (JSON.parse(stdout) as { cpuMsPerRequest: number }).cpuMsPerRequest, receiver: ownCpuMs(since) / (count + 16) };
}

async function backlog(db: pg.Client): Promise<number> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'pending'");
  return rows[0]?.n ?? 0;
}

export async function runWebhookBench(): Promise<void> {
  const env = await createEnvironment();
  const dir = mkdtempSync(join(tmpdir(), 'idp-bench-webhooks-'));
  const tls = selfSignedCertificate(dir);
  let received = 0;
  const receiver = https.createServer({ key: readFileSync(tls.key), cert: readFileSync(tls.cert) }, (req, res) => {
    req.resume().on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const db = new pg.Client({ connectionString: env.databaseUrl });
  await db.connect();
  const port = await freePort();
  const serverEnv = productionEnv(port, {
    DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, IDP_SECRET: env.secret,
    NODE_EXTRA_CA_CERTS: tls.cert, IDP_WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32',
  });
  await seed(serverEnv);
  const servers = await startInstances(1, serverEnv, port, dir, 'webhooks');
  try {
    const url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const endpoint = (JSON.parse(idp(serverEnv, 'webhooks', 'add', '--url', url, '--event', 'token_issued')) as { id: string }).id;
    const browser = await signIn(servers.url);
    const [code] = await mintCodes(servers.url, browser, 1);
    const ctx: TargetContext = { target: 'service', servers, browser, accessToken: (await exchangeCode(servers.url, code as string)).access_token };
    const bare = await bareRequestCost(url, tls.cert);
    const results: Array<ScenarioResult & { label: Label; realRound: number }> = [];
    const rates: number[] = [];
    const receiverCpu: number[] = [];
    let subscribed = true;
    // A phase with the endpoint subscribed first, not counted: the delivery's connections, code
    // and statements start warm in the first measured round as in the others.
    console.log('  warm-up, with the webhook (not counted):');
    for (const scenario of SCENARIOS) await runScenarioRound(scenario, 2 * ROUNDS, [ctx], { connections: 64, warmupSeconds: 1, measureSeconds: 3 }, []);
    while ((await backlog(db)) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    for (let round = 0; round < ROUNDS; round++) {
      const order: Label[] = round % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
      for (const label of order) {
        if ((label === 'with') !== subscribed) {
          idp(serverEnv, 'webhooks', label === 'with' ? 'enable' : 'disable', endpoint);
          subscribed = label === 'with';
          // Every instance reloads what is subscribed on the change's notification.
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
        // A round number of its own per label: code exchange mints to this label's refresh pace.
        const slot = round * 2 + (label === 'with' ? 1 : 0);
        // What the previous phases wrote is vacuumed first, so that no phase pays for an
        // autovacuum of another's rows (its workers count as this database's PostgreSQL CPU).
        await db.query('VACUUM (ANALYZE) refresh_token_families, events, webhook_deliveries, webhook_attempts');
        const start = Date.now();
        const before = received;
        const cpuBefore = process.cpuUsage();
        const phase: ScenarioResult[] = [];
        for (const scenario of SCENARIOS) await runScenarioRound(scenario, slot, [ctx], { connections: 64, warmupSeconds: 1, measureSeconds: 5 }, phase);
        results.push(...phase.map((r) => ({ ...r, label, realRound: round })));
        if (label === 'with') {
          while ((await backlog(db)) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
          const rate = (received - before) / ((Date.now() - start) / 1000);
          rates.push(rate);
          receiverCpu.push(ownCpuMs(cpuBefore) / Math.max(1, received - before));
          console.log(`  round ${round + 1}: ${received - before} events delivered, ${rate.toFixed(0)} per second end to end`);
        }
      }
    }
    console.log(`\n${ROUNDS} rounds at concurrency 64, with a token_issued subscription ÷ without (verdict: the median of the per-round ratios):`);
    for (const scenario of SCENARIOS) {
      const rps = (label: Label, round: number) => results.find((r) => r.scenario === scenario && r.label === label && r.realRound === round)?.rps ?? Number.NaN;
      const ratios = Array.from({ length: ROUNDS }, (_, i) => rps('with', i) / rps('without', i));
      const ratio = median(ratios);
      console.log(`  ${scenario.padEnd(14)} median req/s without ${median(ratios.map((_, i) => rps('without', i))).toFixed(0).padStart(5)}  with ${median(ratios.map((_, i) => rps('with', i))).toFixed(0).padStart(5)}  `
        + `rounds ${ratios.map((r) => r.toFixed(2)).join(' ')}  ratio ${ratio.toFixed(3)}  ${ratio >= TARGET ? 'met' : 'NOT MET'} (target >= ${TARGET})`);
    }
    console.log(`  delivery       median ${median(rates).toFixed(0)} events per second end to end (one instance, one endpoint)`);
    // Where the difference goes: CPU per answer of the instance (its delivery work included, as
    // far as it ran during the phase), its main thread, and PostgreSQL.
    console.log('  CPU per answer, ms (medians over the rounds), without -> with: instance | main thread | PostgreSQL');
    for (const scenario of SCENARIOS) {
      const cpu = (label: Label, pick: (r: ScenarioResult) => number) => median(results.filter((r) => r.scenario === scenario && r.label === label).map(pick)).toFixed(3);
      const pair = (pick: (r: ScenarioResult) => number) => `${cpu('without', pick)} -> ${cpu('with', pick)}`;
      console.log(`  ${scenario.padEnd(14)} ${pair((r) => r.serverCpuMsPerRequest)} | ${pair((r) => r.mainThreadCpuMsPerRequest)} | ${pair((r) => r.postgresCpuMsPerRequest)}`);
    }
    // What an event cannot cost less than on this machine: its HTTPS request, sender and receiver
    // sharing the cores with the token endpoint. The ceiling is the ratio if delivering an event
    // cost the instance only that request (the outbox, claims and results free), from the CPU
    // per answer of everything the phase ran without (instance, PostgreSQL, Redis, the load).
    const receiverMs = median(receiverCpu);
    console.log(`  a bare HTTPS request (keep-alive, no outbox), CPU ms: sender ${bare.sender.toFixed(3)}, receiver ${bare.receiver.toFixed(3)}; the receiver during the runs ${receiverMs.toFixed(3)} per event`);
    for (const scenario of SCENARIOS) {
      const all = (label: Label) => median(results.filter((r) => r.scenario === scenario && r.label === label)
        .map((r) => r.serverCpuMsPerRequest + r.postgresCpuMsPerRequest + r.redisCpuMsPerRequest + r.loaderCpuMsPerRequest));
      const without = all('without');
      const extra = all('with') + receiverMs - without;
      console.log(`  ${scenario.padEnd(14)} CPU per answer in all without ${without.toFixed(3)} ms; an event adds ${extra.toFixed(3)} (a bare request: ${(bare.sender + bare.receiver).toFixed(3)}); `
        + `ceiling ${(without / (without + bare.sender + bare.receiver)).toFixed(3)}, at the CPU measured ${(without / (without + extra)).toFixed(3)}`);
    }
  } finally {
    await servers.stop();
    await db.end();
    receiver.close();
    await env.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
}
