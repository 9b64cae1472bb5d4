/**
 * What the orchestrator drives: a fresh PostgreSQL database and a Redis database index of the
 * bench's own (both removed afterwards), and one load process per scenario
 * with the servers' CPU time, memory and request split read around its measured phase.
 */
import { execFileSync, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { LoadJob, PhaseResult } from './load.ts';
import { cpuMs, logOffsets, mainThreadCpuMs, machineJiffies, requestLinesBetween, ROOT, sampleRss, storageCpuDelta, storageCpuMs, type Instances } from './servers.ts';

const POSTGRES_ADMIN_URL = process.env.IDP_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_BASE_URL = process.env.IDP_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CLAIM_KEY = 'idp-bench:claim';

export interface Environment {
  databaseUrl: string;
  redisUrl: string;
  secret: string;
  /** Another database on the same server (the scale comparison uses two). */
  createDatabase(): Promise<string>;
  cleanup(): Promise<void>;
}

async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** An empty Redis database index, claimed with a key so that two benches never share one. */
async function claimRedisDb(): Promise<{ url: string; release(): Promise<void> }> {
  for (let db = 15; db >= 1; db--) {
    const url = `${REDIS_BASE_URL.replace(/\/\d*$/, '')}/${db}`;
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const empty = (await redis.dbsize()) === 0;
    if (empty && (await redis.set(CLAIM_KEY, String(process.pid), 'EX', 6 * 3600, 'NX')) === 'OK') {
      return {
        url,
        async release() {
          // Only what the service wrote (its `idp:` prefix), then the claim.
          let cursor = '0';
          do {
            const [next, keys] = await redis.scan(cursor, 'MATCH', 'idp:*', 'COUNT', 1000);
            cursor = next;
            if (keys.length > 0) await redis.unlink(...keys);
          } while (cursor !== '0');
          await redis.del(CLAIM_KEY);
          redis.disconnect();
        },
      };
    }
    redis.disconnect();
  }
  throw new Error('no empty Redis database index (1-15) to claim');
}

export async function createEnvironment(): Promise<Environment> {
  const databases: string[] = [];
  const createDatabase = async () => {
    const name = `idp_bench_${randomBytes(6).toString('hex')}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    databases.push(name);
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${name}`;
    return url.href;
  };
  const redis = await claimRedisDb();
  const databaseUrl = await createDatabase().catch(async (error: unknown) => {
    await redis.release();
    throw error;
  });
  return {
    databaseUrl,
    redisUrl: redis.url,
    secret: randomBytes(32).toString('hex'),
    createDatabase,
    async cleanup() {
      for (const name of databases) await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
      await redis.release().catch(() => {});
    },
  };
}

/** Which code was measured: the commit, and the files of src/ and migrations/ changed on top of it. */
export function sourceState(): { commit: string; uncommitted: string[] } {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  try {
    const uncommitted = git('status', '--porcelain', '--', 'src', 'migrations').split('\n').filter((l) => l !== '').map((l) => l.slice(3));
    return { commit: git('rev-parse', 'HEAD'), uncommitted };
  } catch {
    return { commit: 'unknown', uncommitted: [] };
  }
}

export interface ScenarioResult extends PhaseResult {
  scenario: LoadJob['scenario'];
  /** What answered: the service, its storage-free floor, or the peer (node-oidc-provider). Absent: the service. */
  target?: 'service' | 'floor' | 'peer';
  /** The interleaved round (0-based) this measurement belongs to. */
  round?: number;
  instances: number;
  connections: number;
  /** CPU time of the server processes during the measured phase, per good answer, ms. */
  serverCpuMsPerRequest: number;
  serverCpuMs: number;
  /**
   * The same, of the instances' main threads alone: a single instance answers no faster than its
   * main thread allows, however idle the rest of the machine.
   */
  mainThreadCpuMsPerRequest: number;
  /** CPU time of PostgreSQL (this database's backends) and Redis per good answer, ms. */
  storageCpuMsPerRequest: number;
  /** The same, PostgreSQL and Redis apart. */
  postgresCpuMsPerRequest: number;
  redisCpuMsPerRequest: number;
  /** CPU time of the load process per good answer, ms. */
  loaderCpuMsPerRequest: number;
  /** Highest VmRSS of any one instance during the measured phase, MB. */
  peakRssMb: number;
  peakRssMbByInstance: number[];
  /** Share of the whole machine's CPU that was busy during the measured phase (0..1). */
  machineBusy: number;
  /**
   * Share of the whole machine's CPU that was busy with anything but the bench (instances, its
   * database's backends, Redis, the load process): other work on the machine, i.e. noise (0..1).
   */
  othersBusy: number;
  /** Request log lines per instance during the measured phase: how the kernel spread the load. */
  requestsByInstance: number[];
}

/** Runs one scenario in a forked load process and reads the servers around its measured phase. */
export function runLoad(job: LoadJob, servers: Instances): Promise<ScenarioResult> {
  const child = fork(join(ROOT, 'bench/load.ts'), [], { cwd: ROOT, execArgv: [] });
  /** A /proc reading summed over the instances. */
  const overInstances = (read: (pid: number) => number) => servers.pids.reduce((sum, pid) => sum + read(pid), 0);
  let before = { cpu: 0, main: 0, storage: new Map() as ReturnType<typeof storageCpuMs>, jiffies: machineJiffies(), offsets: [] as number[] };
  let rss: ReturnType<typeof sampleRss> | undefined;
  let reported = false;
  const limitMs = ((job.warmupSeconds + job.measureSeconds) * 4 + 120) * 1000;
  return new Promise<ScenarioResult>((resolve, reject) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`${job.scenario}: no result within ${limitMs} ms`))), limitMs);
    child.on('message', (message: { type: string; result?: PhaseResult; message?: string }) => {
      if (message.type === 'measuring') {
        before = { cpu: overInstances(cpuMs), main: overInstances(mainThreadCpuMs), storage: storageCpuMs(servers.database), jiffies: machineJiffies(), offsets: logOffsets(servers.logFiles) };
        rss = sampleRss(servers.pids);
        child.send({ type: 'go' });
      } else if (message.type === 'result' && message.result) {
        reported = true;
        const serverCpuMs = overInstances(cpuMs) - before.cpu;
        const mainThreadMs = overInstances(mainThreadCpuMs) - before.main;
        const storageMs = storageCpuDelta(before.storage, storageCpuMs(servers.database));
        const jiffies = machineJiffies();
        // /proc/stat counts in USER_HZ ticks (10 ms).
        const totalMs = (jiffies.total - before.jiffies.total) * 10;
        const othersMs = (jiffies.busy - before.jiffies.busy) * 10 - serverCpuMs - storageMs.postgres - storageMs.redis - message.result.loaderCpuMs;
        const peaks = rss?.stop() ?? [];
        const result = message.result;
        clearTimeout(timer);
        // The instances' last log lines of the phase reach their files a moment later.
        const settle = new Promise((r) => setTimeout(r, 200));
        void settle.then(() => resolve({
          scenario: job.scenario,
          instances: servers.pids.length,
          connections: job.connections,
          ...result,
          serverCpuMsPerRequest: serverCpuMs / Math.max(1, result.requests),
          serverCpuMs,
          mainThreadCpuMsPerRequest: mainThreadMs / Math.max(1, result.requests),
          storageCpuMsPerRequest: (storageMs.postgres + storageMs.redis) / Math.max(1, result.requests),
          postgresCpuMsPerRequest: storageMs.postgres / Math.max(1, result.requests),
          redisCpuMsPerRequest: storageMs.redis / Math.max(1, result.requests),
          loaderCpuMsPerRequest: result.loaderCpuMs / Math.max(1, result.requests),
          peakRssMb: Math.max(0, ...peaks),
          peakRssMbByInstance: peaks,
          machineBusy: (jiffies.busy - before.jiffies.busy) / Math.max(1, jiffies.total - before.jiffies.total),
          othersBusy: Math.max(0, othersMs) / Math.max(1, totalMs),
          requestsByInstance: requestLinesBetween(servers.logFiles, before.offsets, logOffsets(servers.logFiles)),
        }));
      } else if (message.type === 'error') {
        clearTimeout(timer);
        rss?.stop();
        reject(new Error(`load process failed in ${job.scenario}: ${message.message}`));
      }
    });
    child.on('exit', (code) => {
      if (reported) return;
      clearTimeout(timer);
      rss?.stop();
      reject(new Error(`load process for ${job.scenario} exited with ${code} before reporting`));
    });
    child.send({ type: 'job', job });
  });
}
