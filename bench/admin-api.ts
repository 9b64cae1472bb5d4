/**
 * `npm run bench -- --admin`: the administration API's lists on a large table. 100,000 users
 * (bench/scale-seed.ts), one instance in its production shape; an administration client's token.
 * For the list in username order and for two searches (`q=scale-user`, the start of every
 * username and email; `q=given1`, the start of one user's given name in nine, scattered through
 * the username order): every page of 50 from the first to the last (the walk, one request at a
 * time), the cost of the first and of the last full page (the median of 30 requests each: a
 * keyset read, so the last must cost no more than 1.5 times the first). Then a page of 50 at
 * concurrency 8 for 5 seconds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon, { type Result } from 'autocannon';
import { createEnvironment, sourceState } from './harness.ts';
import { percentile } from './load.ts';
import { median } from './median.ts';
import { seed } from './prepare.ts';
import { seedRows } from './scale-seed.ts';
import { freePort, productionEnv, ROOT, startInstances } from './servers.ts';

const USERS = 100_000;
const PAGE = 50;
const SAMPLES = 30;
const CONNECTIONS = 8;
const TARGET_RATIO = 1.5;
/** The list in username order, then two searches through it. */
const LISTS = ['', 'q=scale-user', 'q=given1'] as const;

/** One list walked, and its first and last full page measured. */
export interface ListCost {
  query: string;
  walk: { pages: number; items: number; seconds: number; p50Ms: number; p99Ms: number };
  firstPageMs: number;
  lastPageMs: number;
  ratio: number;
  met: boolean;
}

export interface AdminBenchReport {
  mode: 'admin';
  startedAt: string;
  machine: { cores: number; node: string; loadavgBefore: number[]; loadavgAfter: number[] };
  source: ReturnType<typeof sourceState>;
  users: number;
  lists: ListCost[];
  met: boolean;
  concurrent: { connections: number; rps: number; p50Ms: number; p99Ms: number; non2xx: number; errors: number };
}

/** `idp clients add` for the administration client; its secret. */
async function adminClient(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'bin/idp.js'), 'clients', 'add', '--id', 'bench-admin', '--grant', 'client_credentials', '--scope', 'admin_api', '--json'], { env, cwd: ROOT });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`idp clients add failed (${code}): ${output}`);
  return (JSON.parse(output) as { client_secret: string }).client_secret;
}

async function adminToken(url: string, secret: string): Promise<string> {
  const res = await fetch(`${url}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`bench-admin:${secret}`).toString('base64')}` },
    body: 'grant_type=client_credentials&scope=admin_api',
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

/** One page: its items' count, its next cursor, and how long it took (ms). */
async function page(url: string, token: string): Promise<{ items: number; next: string | null; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { items: unknown[]; next_cursor: string | null };
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
  return { items: body.items.length, next: body.next_cursor, ms };
}

const listUrl = (api: string, query: string, cursor?: string) => `${api}/users?limit=${PAGE}${query ? `&${query}` : ''}${cursor ? `&cursor=${cursor}` : ''}`;

/** Every page in turn; `lastCursor` gives the last full page (the very last may hold a few rows only). */
async function walk(api: string, token: string, query: string): Promise<{ pages: number; items: number; seconds: number; latencies: number[]; lastCursor: string }> {
  const started = performance.now();
  const latencies: number[] = [];
  let items = 0;
  let cursor: string | null = null;
  let lastCursor = '';
  do {
    const got = await page(listUrl(api, query, cursor ?? undefined), token);
    latencies.push(got.ms);
    items += got.items;
    if (cursor !== null && got.items === PAGE) lastCursor = cursor;
    cursor = got.next;
  } while (cursor !== null);
  return { pages: latencies.length, items, seconds: (performance.now() - started) / 1000, latencies, lastCursor };
}

async function costOf(url: string, token: string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < SAMPLES; i++) samples.push((await page(url, token)).ms);
  return median(samples);
}

/** Walks the list of `query`, then measures its first and last full page, alternating, so that drift in the machine's load hits both. */
async function measureList(api: string, token: string, query: string): Promise<ListCost> {
  const walked = await walk(api, token, query);
  console.log(`walk ${query || '(all users)'}: ${walked.pages} pages, ${walked.items} users in ${walked.seconds.toFixed(1)} s`);
  const first: number[] = [];
  const last: number[] = [];
  for (let round = 0; round < 3; round++) {
    first.push(await costOf(listUrl(api, query), token));
    last.push(await costOf(listUrl(api, query, walked.lastCursor), token));
  }
  const sorted = [...walked.latencies].sort((a, b) => a - b);
  const firstPageMs = median(first);
  const lastPageMs = median(last);
  return {
    query,
    walk: { pages: walked.pages, items: walked.items, seconds: walked.seconds, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) },
    firstPageMs, lastPageMs, ratio: lastPageMs / firstPageMs, met: lastPageMs / firstPageMs <= TARGET_RATIO,
  };
}

export async function runAdminBench(options: { keepLogs: boolean }): Promise<AdminBenchReport> {
  const loadavgBefore = loadavg();
  const env = await createEnvironment();
  const logDir = mkdtempSync(join(tmpdir(), 'idp-bench-logs-'));
  try {
    const port = await freePort();
    const serverEnv = productionEnv(port, { DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, IDP_SECRET: env.secret });
    await seed(serverEnv);
    console.log(`seeding ${USERS} users:`);
    await seedRows(env.databaseUrl, { clients: 0, users: USERS, families: 0 }, (line) => console.log(line));
    const servers = await startInstances(1, serverEnv, port, logDir, 'admin');
    try {
      const token = await adminToken(servers.url, await adminClient(serverEnv));
      const api = `${servers.url}/admin/v1`;
      const lists: ListCost[] = [];
      for (const query of LISTS) lists.push(await measureList(api, token, query));
      const firstUrl = listUrl(api, '');
      const concurrent = await new Promise<Result>((resolve, reject) => {
        autocannon({ url: firstUrl, connections: CONNECTIONS, duration: 5, headers: { authorization: `Bearer ${token}` } },
          (error, result) => (error ? reject(error) : resolve(result)));
      });
      const report: AdminBenchReport = {
        mode: 'admin', startedAt: new Date().toISOString(),
        machine: { cores: availableParallelism(), node: process.version, loadavgBefore, loadavgAfter: loadavg() },
        source: sourceState(), users: USERS, lists, met: lists.every((list) => list.met),
        concurrent: {
          connections: CONNECTIONS, rps: concurrent.requests.average, p50Ms: concurrent.latency.p50, p99Ms: concurrent.latency.p99,
          non2xx: concurrent.non2xx, errors: concurrent.errors + concurrent.timeouts,
        },
      };
      printAdmin(report);
      return report;
    } finally {
      await servers.stop();
    }
  } finally {
    await env.cleanup();
    if (options.keepLogs) console.log(`instance logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}

function printAdmin(r: AdminBenchReport): void {
  for (const list of r.lists) {
    console.log(`\nadministration API, GET /users?limit=${PAGE}${list.query ? `&${list.query}` : ''} on ${r.users} users:`);
    console.log(`  walk, one page at a time: ${list.walk.pages} pages (${list.walk.items} users) in ${list.walk.seconds.toFixed(1)} s, p50 ${list.walk.p50Ms.toFixed(1)} ms, p99 ${list.walk.p99Ms.toFixed(1)} ms`);
    console.log(`  first page ${list.firstPageMs.toFixed(2)} ms, last full page ${list.lastPageMs.toFixed(2)} ms (medians of ${SAMPLES} x 3): ratio ${list.ratio.toFixed(2)} ${list.met ? 'met' : 'NOT MET'} (target <= ${TARGET_RATIO})`);
  }
  console.log(`\nGET /users?limit=${PAGE} at concurrency ${r.concurrent.connections}: ${r.concurrent.rps.toFixed(0)} req/s, p50 ${r.concurrent.p50Ms} ms, p99 ${r.concurrent.p99Ms} ms, non-2xx ${r.concurrent.non2xx}, errors ${r.concurrent.errors}`);
}
