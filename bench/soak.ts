/**
 * `npm run soak`: the chaos soak. Three `idp serve` instances share one PostgreSQL database and
 * one Redis reached through Sentinel (a master, a replica, three sentinels; started here), behind
 * a small round-robin balancer. Steady traffic runs throughout: password sign-ins, code exchanges,
 * refreshes (each client following its own refresh chain), client credentials, introspections and
 * revocations. Meanwhile the soak, phase by phase, kills an instance (SIGKILL) and starts it again,
 * fails Redis over (the master SIGKILLed), terminates every PostgreSQL connection of the database
 * and rotates the signing key. Loopback only, bounded: it stops by itself (at most 5 minutes).
 *
 * What it reports, per phase: requests answered, 5xx (only 503 temporarily_unavailable is
 * allowed, and only while a fault lasts), requests cut by the kill, p99 latency. And overall:
 * refresh chains broken (a client lost its session because of a fault), tokens accepted after
 * their revocation, instances that crashed. Any of those not zero fails the run (exit 1).
 * Results also go to bench/results/soak-<time>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { startRedisSentinel, type RedisSentinelServers } from '../test/helpers/distributed.ts';
import { freePort, runIdp, startServer, type RunningServer } from '../test/helpers/process.ts';
import { POSTGRES_ADMIN_URL, createTestDatabase, type TestDatabase } from '../test/helpers/services.ts';
import { Browser, readForm } from '../test/helpers/browser-http.ts';
import { PKCE_VERIFIER, SERVICE, WEB, authorizePath, basic, exchangeCode, mintCodes, seed, signIn, SIGN_IN_USER, USER } from './prepare.ts';
import { ROOT } from './servers.ts';

const HARD_LIMIT_MS = 5 * 60 * 1000;
/** After a fault has been undone, answers may still be 503 this long (pools and subscriptions reconnecting). */
const SETTLE_MS = 2000;
const CHAINS = 12;
const IDP_SECRET = 'a5'.repeat(32);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// The balancer: round robin over the instances in rotation, Host kept, as a load balancer does

class RoundRobin {
  readonly url: string;
  readonly port: number;
  private readonly server: http.Server;
  private readonly live = new Set<number>();
  private next = 0;

  private constructor(port: number, server: http.Server) {
    this.port = port;
    this.server = server;
    this.url = `http://127.0.0.1:${port}`;
  }

  static async start(): Promise<RoundRobin> {
    const port = await freePort();
    const server = http.createServer();
    const balancer = new RoundRobin(port, server);
    server.on('request', (req, res) => balancer.forward(req, res));
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return balancer;
  }

  add(port: number): void {
    this.live.add(port);
  }

  /** Out of rotation, as a health check takes a dead instance out. */
  remove(port: number): void {
    this.live.delete(port);
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const ports = [...this.live];
    const port = ports[this.next++ % Math.max(1, ports.length)];
    if (port === undefined) {
      res.writeHead(502).end('no instance');
      return;
    }
    const upstream = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    // The instance died under the request: the client's connection is cut, as behind a real balancer.
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

// ---------------------------------------------------------------------------------------------
// What is measured

type Kind = 'sign-in' | 'code exchange' | 'refresh' | 'client credentials' | 'introspection' | 'revocation';

interface Sample {
  phase: string;
  kind: Kind;
  ms: number;
  /** 0: the connection was cut (an instance killed under it). */
  status: number;
  unavailable: boolean;
  duringFault: boolean;
}

const samples: Sample[] = [];
let phase = 'starting';
let faultUntil = 0;
let faulting = false;
const inFault = () => faulting || Date.now() < faultUntil;
const findings = { chainsBroken: [] as string[], acceptedAfterRevocation: [] as string[], crashes: [] as string[], unexpected: [] as string[] };

interface Answer {
  status: number;
  body: Record<string, unknown>;
  text: string;
}

/** One request over node:http (fetch would not send a Host of our choosing) to `port`, with the public Host. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, setHost: false, headers: { host: new URL(lb.url).host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('response aborted')));
    });
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.on('error', reject);
    req.end(body);
  });
}

/** One request through the balancer (or straight to the instance on `port`), measured. */
async function call(kind: Kind, path: string, init: { form?: Record<string, string>; auth?: string } = {}, port = lb.port): Promise<Answer> {
  const started = performance.now();
  const duringFault = inFault();
  let answer: Answer;
  try {
    const headers: Record<string, string> = {};
    if (init.form) headers['content-type'] = 'application/x-www-form-urlencoded';
    if (init.auth) headers.authorization = init.auth;
    const res = await send(port, init.form ? 'POST' : 'GET', path, headers, init.form ? new URLSearchParams(init.form).toString() : undefined);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(res.text) as Record<string, unknown>;
    } catch {
      // pages and empty bodies
    }
    answer = { ...res, body };
  } catch (error) {
    answer = { status: 0, body: {}, text: String(error) };
  }
  const unavailable = answer.status === 503 && answer.body.error === 'temporarily_unavailable';
  samples.push({ phase, kind, ms: performance.now() - started, status: answer.status, unavailable, duringFault: duringFault || inFault() });
  return answer;
}

// ---------------------------------------------------------------------------------------------
// Traffic

let stopping = false;
let revocationsChecked = 0;

/** One client following its own refresh chain; a cut or a 503 keeps the token it holds (a retry). */
async function followChain(i: number, first: string): Promise<void> {
  let held = first;
  while (!stopping) {
    const res = await call('refresh', '/connect/token', { form: { grant_type: 'refresh_token', refresh_token: held }, auth: basic(WEB.clientId, WEB.secret) });
    if (res.status === 200) held = String(res.body.refresh_token);
    else if (res.status !== 0 && res.status !== 503) {
      findings.chainsBroken.push(`chain ${i} in phase ${phase}: ${res.status} ${res.text.slice(0, 160)}`);
      return;
    }
    await sleep(res.status === 200 ? 40 : 100);
  }
}

/** A password sign-in through the pages, as bench/prepare.ts's signIn, answering with the status of the step that ended it. */
async function signInOnce(): Promise<{ status: number; unavailable: boolean }> {
  const browser = new Browser();
  const page = await browser.follow(await browser.get(`${lb.url}${authorizePath()}`), lb.url);
  if (page.status !== 200) return { status: page.status, unavailable: page.status === 503 && page.body.includes('temporarily_unavailable') };
  const form = readForm(page.body, page.url);
  const done = await browser.post(form.action, { ...form.fields, username: SIGN_IN_USER.username, password: SIGN_IN_USER.password });
  if (done.status === 302 && done.location?.startsWith(`${WEB.redirectUri}?code=`)) return { status: 200, unavailable: false };
  if (done.status === 302) findings.unexpected.push(`sign-in in phase ${phase}: redirected to ${done.location ?? ''}`);
  return { status: done.status, unavailable: done.status === 503 && done.body.includes('temporarily_unavailable') };
}

async function signIns(): Promise<void> {
  while (!stopping) {
    const started = performance.now();
    const duringFault = inFault();
    const { status, unavailable } = await signInOnce().catch(() => ({ status: 0, unavailable: false }));
    samples.push({ phase, kind: 'sign-in', ms: performance.now() - started, status, unavailable, duringFault: duringFault || inFault() });
    await sleep(300);
  }
}

/** Codes minted by a signed-in browser and exchanged; every third access token is revoked and checked everywhere. */
async function codeExchanges(): Promise<void> {
  let browser = await signIn(lb.url, USER);
  for (let n = 0; !stopping; n++) {
    let code: string;
    try {
      [code = ''] = await mintCodes(lb.url, browser, 1, 1);
    } catch {
      await sleep(200);
      browser = await signIn(lb.url, USER).catch(() => browser);
      continue;
    }
    const res = await call('code exchange', '/connect/token', {
      form: { grant_type: 'authorization_code', code, redirect_uri: WEB.redirectUri, code_verifier: PKCE_VERIFIER },
      auth: basic(WEB.clientId, WEB.secret),
    });
    if (res.status === 200 && n % 3 === 0) await revokeAndCheck(String(res.body.access_token));
    await sleep(60);
  }
}

/** Revokes an access token; once the revocation was answered 200, no instance may accept the token. */
async function revokeAndCheck(accessToken: string): Promise<void> {
  const revoked = await call('revocation', '/connect/revoke', { form: { token: accessToken, token_type_hint: 'access_token' }, auth: basic(WEB.clientId, WEB.secret) });
  if (revoked.status !== 200) return;
  revocationsChecked += 1;
  for (const server of instances.filter((s) => s.child.exitCode === null && s.child.signalCode === null)) {
    const seen = await call('introspection', '/connect/introspect', { form: { token: accessToken }, auth: basic(WEB.clientId, WEB.secret) }, server.port);
    if (seen.status === 200 && seen.body.active !== false) {
      // Said with whether it lasts: a moment later, and a second later.
      const later = async (ms: number) => {
        await sleep(ms);
        const again = await send(server.port, 'POST', '/connect/introspect', { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(WEB.clientId, WEB.secret) }, new URLSearchParams({ token: accessToken }).toString());
        return (JSON.parse(again.text) as { active?: boolean }).active === true ? 'still active' : 'inactive';
      };
      findings.acceptedAfterRevocation.push(`introspection at ${server.port} in phase ${phase}: ${await later(50)} 50 ms later, ${await later(1000)} a second later`);
    }
  }
}

async function clientCredentials(): Promise<void> {
  while (!stopping) {
    const res = await call('client credentials', '/connect/token', { form: { grant_type: 'client_credentials', scope: SERVICE.scope }, auth: basic(SERVICE.clientId, SERVICE.secret) });
    if (res.status === 200) {
      const seen = await call('introspection', '/connect/introspect', { form: { token: String(res.body.access_token) }, auth: basic(SERVICE.clientId, SERVICE.secret) });
      if (seen.status === 200 && seen.body.active !== true) findings.unexpected.push(`a fresh access token introspected inactive in phase ${phase}`);
    }
    await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------
// The deployment and its faults

let lb: RoundRobin;
let sentinel: RedisSentinelServers;
let db: TestDatabase;
let instances: RunningServer[] = [];
const killedOnPurpose = new Set<RunningServer>();

function instanceEnv(): Record<string, string> {
  return {
    DATABASE_URL: db.url, IDP_SECRET, REDIS_URL: sentinel.url, IDP_BASE_URL: lb.url, NODE_ENV: 'production', IDP_ALLOW_HTTP: '1',
    IDP_TOKEN_RATE_LIMIT: '10000000', IDP_LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000', IDP_LOGIN_MAX_FAILURES: '1000', IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000', IDP_AUTHORIZE_RATE_LIMIT: '10000000', LOG_LEVEL: 'warn',
  };
}

function watch(server: RunningServer): void {
  server.child.once('exit', (code, signal) => {
    if (!killedOnPurpose.has(server) && !stopping) findings.crashes.push(`instance ${server.port} exited (${code ?? signal}): ${server.output().slice(-500)}`);
  });
}

async function startInstance(port?: number): Promise<RunningServer> {
  const server = await startServer(instanceEnv(), 30_000, port === undefined ? {} : { port });
  watch(server);
  lb.add(server.port);
  return server;
}

/** Runs `fault` as a phase: traffic goes on; 503s count as allowed from its start until SETTLE_MS after it. */
async function faultPhase(name: string, fault: () => Promise<string>, after = 8000): Promise<string> {
  phase = name;
  faulting = true;
  let detail: string;
  try {
    detail = await fault();
  } finally {
    faulting = false;
    faultUntil = Date.now() + SETTLE_MS;
  }
  await sleep(after);
  return detail;
}

async function steady(name: string, ms: number): Promise<void> {
  phase = name;
  await sleep(ms);
}

async function killAndRestart(): Promise<string> {
  const victim = instances[0] as RunningServer;
  killedOnPurpose.add(victim);
  lb.remove(victim.port);
  victim.child.kill('SIGKILL');
  await sleep(3000);
  const started = Date.now();
  const again = await startInstance(victim.port);
  instances = [again, ...instances.slice(1)];
  return `instance ${victim.port} SIGKILLed, out of rotation 3 s, back and ready in ${Date.now() - started} ms`;
}

async function redisFailover(): Promise<string> {
  const { ms, rejoined } = await sentinel.failover();
  const promoted = Date.now();
  for (const server of instances) {
    while ((await fetch(`${server.url}/readyz`).catch(() => undefined))?.status !== 200) {
      if (Date.now() - promoted > 30_000) throw new Error(`instance ${server.port} not ready 30 s after the failover`);
      await sleep(100);
    }
  }
  const ready = Date.now() - promoted;
  await rejoined;
  return `new master named ${ms} ms after the kill; every instance ready ${ready} ms later`;
}

async function terminateConnections(): Promise<string> {
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  try {
    const name = new URL(db.url).pathname.slice(1);
    const { rows } = await admin.query('select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()) t', [name]);
    return `${(rows[0] as { n: number }).n} PostgreSQL connections terminated`;
  } finally {
    await admin.end();
  }
}

async function rotateKey(): Promise<string> {
  const rotated = await runIdp(['keys', 'rotate', '--json'], { DATABASE_URL: db.url, IDP_SECRET });
  if (rotated.code !== 0) throw new Error(`idp keys rotate: ${rotated.stderr}`);
  return `signing key rotated to ${(JSON.parse(rotated.stdout) as { kid: string }).kid}`;
}

// ---------------------------------------------------------------------------------------------
// The report

function p99(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
}

interface PhaseRow {
  phase: string;
  detail: string;
  requests: number;
  served: number;
  unavailableInFault: number;
  fivexxOther: number;
  cut: number;
  p99Ms: number;
}

function phaseRows(details: Map<string, string>): PhaseRow[] {
  return [...details].map(([name, detail]) => {
    const own = samples.filter((s) => s.phase === name);
    return {
      phase: name,
      detail,
      requests: own.length,
      served: own.filter((s) => s.status > 0 && s.status < 500).length,
      unavailableInFault: own.filter((s) => s.unavailable && s.duringFault).length,
      fivexxOther: own.filter((s) => s.status >= 500 && !(s.unavailable && s.duringFault)).length,
      cut: own.filter((s) => s.status === 0).length,
      p99Ms: Math.round(p99(own.filter((s) => s.status > 0).map((s) => s.ms))),
    };
  });
}

function printReport(rows: PhaseRow[], seconds: number): void {
  const header = ['phase', 'requests', 'served', '503 in fault', 'other 5xx', 'cut', 'p99 ms'];
  const lines = rows.map((r) => [r.phase, r.requests, r.served, r.unavailableInFault, r.fivexxOther, r.cut, r.p99Ms].map(String));
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  console.log(format(header));
  console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
  for (const line of lines) console.log(format(line));
  console.log('');
  for (const r of rows) if (r.detail) console.log(`${r.phase}: ${r.detail}`);
  const total = samples.length;
  console.log('');
  console.log(`requests: ${total} in ${seconds} s (${samples.filter((s) => s.status > 0 && s.status < 500).length} served)`);
  const kinds = [...new Set(samples.map((s) => s.kind))].map((kind) => `${kind} ${samples.filter((s) => s.kind === kind).length}`);
  console.log(`by kind: ${kinds.join(', ')}`);
  console.log(`5xx other than 503 temporarily_unavailable during a fault: ${samples.filter((s) => s.status >= 500 && !(s.unavailable && s.duringFault)).length}`);
  console.log(`refresh chains broken: ${findings.chainsBroken.length} of ${CHAINS}`);
  console.log(`tokens accepted after their revocation: ${findings.acceptedAfterRevocation.length} (${revocationsChecked} revocations, each checked at every running instance)`);
  console.log(`crashes: ${findings.crashes.length}`);
  for (const line of [...findings.chainsBroken, ...findings.acceptedAfterRevocation, ...findings.crashes, ...findings.unexpected]) console.log(`  ${line}`);
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const began = Date.now();
  console.log('soak: starting PostgreSQL database, Redis Sentinel group, three instances');
  [db, sentinel, lb] = await Promise.all([createTestDatabase(), startRedisSentinel('idpsoak'), RoundRobin.start()]);
  await seed({ PATH: process.env.PATH ?? '', DATABASE_URL: db.url, IDP_SECRET, LOG_LEVEL: 'warn' });
  instances = await Promise.all([startInstance(), startInstance(), startInstance()]);

  const browser = await signIn(lb.url, USER);
  const codes = await mintCodes(lb.url, browser, CHAINS, 4);
  const chains = await Promise.all(codes.map(async (code) => (await exchangeCode(lb.url, code)).refresh_token));
  console.log(`soak: ${CHAINS} refresh chains, traffic starts (${Math.round((Date.now() - began) / 1000)} s of setup)`);

  const traffic = Promise.all([
    ...chains.map((token, i) => followChain(i, token)), signIns(), codeExchanges(), clientCredentials(), clientCredentials(),
  ]);
  const details = new Map<string, string>();
  const run = async (name: string, what: () => Promise<string>) => details.set(name, await faultPhase(name, what));
  const trafficStarted = Date.now();
  details.set('steady', '');
  await steady('steady', 10_000);
  await run('instance killed', killAndRestart);
  await run('Redis failover', redisFailover);
  await run('PostgreSQL connections terminated', terminateConnections);
  await run('signing key rotated', rotateKey);
  details.set('steady again', '');
  await steady('steady again', 8000);
  stopping = true;
  await traffic;
  const seconds = Math.round((Date.now() - trafficStarted) / 1000);

  const rows = phaseRows(details);
  printReport(rows, seconds);
  mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
  const file = join(ROOT, 'bench/results', `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), seconds, chains: CHAINS, rows, findings }, null, 2));
  console.log(`soak: results in ${file}`);
  const fivexx = rows.reduce((n, r) => n + r.fivexxOther, 0);
  const green = fivexx === 0 && findings.chainsBroken.length === 0 && findings.acceptedAfterRevocation.length === 0 && findings.crashes.length === 0 && findings.unexpected.length === 0;
  console.log(green ? 'soak: green' : 'soak: FAILED');
  return green ? 0 : 1;
}

async function cleanup(): Promise<void> {
  stopping = true;
  await Promise.allSettled(instances.map((s) => s.stop()));
  await Promise.allSettled([lb?.close(), sentinel?.stop()]);
  await db?.drop().catch(() => {});
  agent.destroy();
}

const watchdog = setTimeout(() => {
  console.error(`soak: still running after ${HARD_LIMIT_MS / 60_000} minutes: stopped`);
  void cleanup().finally(() => process.exit(1));
}, HARD_LIMIT_MS);

let code = 1;
try {
  code = await main();
} catch (error) {
  console.error(`soak: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
} finally {
  clearTimeout(watchdog);
  await cleanup();
}
process.exit(code);
