/**
 * What one request of each storage-using scenario asks of Redis and PostgreSQL, one request at a
 * time on an idle instance: the Redis commands (by name, from MONITOR on the bench's database
 * index; those a script runs apart from those sent) and the PostgreSQL transactions and rows
 * written (pg_stat_database, which a backend updates once idle for 10 s: hence the waits), per
 * request.
 *
 *   node bench/round-trips.ts [--count 50]
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Browser, readForm } from '../test/helpers/browser-http.ts';
import { createEnvironment } from './harness.ts';
import { authorizePath, basic, exchangeCode, mintCodes, refreshFamilies, seed, signIn, SIGN_IN_USER, WEB } from './prepare.ts';
import { freePort, productionEnv, startInstances } from './servers.ts';

type Stats = { xact_commit: number; tup_inserted: number; tup_updated: number; tup_deleted: number };

async function pgStats(url: string): Promise<Stats> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<Stats>('SELECT xact_commit::int, tup_inserted::int, tup_updated::int, tup_deleted::int FROM pg_stat_database WHERE datname = current_database()');
    return rows[0] as Stats;
  } finally {
    await client.end();
  }
}

/** Runs `task` `count` times, one at a time, and prints what storage saw per run. */
async function observe(label: string, count: number, redisUrl: string, databaseUrl: string, task: (i: number) => Promise<void>): Promise<void> {
  const db = Number(new URL(redisUrl).pathname.slice(1));
  const sent = new Map<string, number>();
  const scripted = new Map<string, number>();
  const monitor = await new Redis(redisUrl).monitor();
  monitor.on('monitor', (_time: string, args: string[], source: string, database: string) => {
    if (Number(database) !== db) return;
    // The command and its key's shape (random parts as *), e.g. `get idp:code:*`.
    const key = String(args[1] ?? '').replace(/[A-Za-z0-9_-]{16,}/g, '*');
    const name = `${String(args[0]).toLowerCase()}${/^(multi|exec|eval|evalsha)$/i.test(String(args[0])) ? '' : ` ${key}`}`;
    const into = source === 'lua' ? scripted : sent;
    into.set(name, (into.get(name) ?? 0) + 1);
  });
  await new Promise((r) => setTimeout(r, 11_000));
  const before = await pgStats(databaseUrl);
  sent.clear();
  scripted.clear();
  for (let i = 0; i < count; i++) await task(i);
  await new Promise((r) => setTimeout(r, 11_000));
  monitor.disconnect();
  const after = await pgStats(databaseUrl);
  // The statistics query itself commits once per reading.
  const per = (n: number) => (n / count).toFixed(2);
  const list = (m: Map<string, number>) => `${per([...m.values()].reduce((a, b) => a + b, 0))} (${[...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${per(v)}`).join(', ')})`;
  console.log(`${label}: Redis commands sent ${list(sent)}, run by scripts ${list(scripted)}; `
    + `PostgreSQL ${per(after.xact_commit - before.xact_commit - 1)} transactions, ${per(after.tup_inserted - before.tup_inserted)} rows inserted, ${per(after.tup_updated - before.tup_updated)} updated, ${per(after.tup_deleted - before.tup_deleted)} deleted per request`);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { count: { type: 'string', default: '50' } } });
  const count = Number(values.count);
  const env = await createEnvironment();
  try {
    const port = await freePort();
    const serverEnv = productionEnv(port, { DATABASE_URL: env.databaseUrl, REDIS_URL: env.redisUrl, IDP_SECRET: env.secret, LOG_LEVEL: 'warn' });
    await seed(serverEnv);
    const servers = await startInstances(1, serverEnv, port, '/tmp', `round-trips-${process.pid}`);
    try {
      const base = servers.url;
      const browser = await signIn(base);
      const codes = await mintCodes(base, browser, count);
      const tokens = await refreshFamilies(base, browser, count);
      const post = (body: string) => fetch(`${base}/connect/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(WEB.clientId, WEB.secret) }, body }).then((r) => r.text());
      await observe('code exchange', count, env.redisUrl, env.databaseUrl, async (i) => void (await exchangeCode(base, codes[i] as string)));
      await observe('refresh', count, env.redisUrl, env.databaseUrl, async (i) => void (await post(`grant_type=refresh_token&refresh_token=${tokens[i] ?? ''}`)));
      await observe('authorize (signed in, prompt-less)', count, env.redisUrl, env.databaseUrl, async () => void (await mintCodes(base, browser, 1, 1)));
      await observe('password sign-in (3 requests)', count, env.redisUrl, env.databaseUrl, async () => {
        const fresh = new Browser();
        const page = await fresh.follow(await fresh.get(`${base}${authorizePath()}`), base);
        const form = readForm(page.body, page.url);
        await fresh.post(form.action, { ...form.fields, username: SIGN_IN_USER.username, password: SIGN_IN_USER.password });
      });
    } finally {
      await servers.stop();
    }
  } finally {
    await env.cleanup();
  }
}
