/**
 * `idp doctor` against running deployments, driven as an operator would: a healthy one (every
 * line ok or skip, exit 0) and broken ones, each named in the output with exit 1: a base URL that
 * disagrees with where the service is reached, Redis stopped, a skewed clock (injected in
 * process through runDoctor) and a URL where nothing answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliContext } from '../../src/cli/context.ts';
import { runDoctor } from '../../src/cli/doctor.ts';
import { parseConfig } from '../../src/config.ts';
import { NO_MAILER } from '../../src/mail/mailer.ts';
import { openDurableStore } from '../../src/store/sql/durable.ts';
import type { DurableStore } from '../../src/store/types.ts';
import { freePort, runIdp, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { REDIS_URL, createTestDatabase, postgresAvailable, redisAvailable, type TestDatabase } from '../helpers/services.ts';
import { waitUntil } from '../helpers/waits.ts';

const IDP_SECRET = 'd'.repeat(64);
const NAMES = ['discovery', 'service', 'issuer', 'jwks', 'https', 'cookies', 'forwarded', 'clock', 'database', 'secret', 'change feed', 'store', 'sign-in source', 'mail'];

/** A Redis of our own, to stop under a running deployment. */
async function startRedis(): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitUntil(`redis-server listens on ${port}`, () => accepts(port), { processes: [child], intervalMs: 100 });
  return {
    url: `redis://127.0.0.1:${port}`,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** `ok    cookies   idp_session: …` -> its status and name (names may hold a space). */
function parseLine(line: string): { status: string; name: string; rest: string } {
  const match = /^(ok|FAIL|warn|skip) +(sign-in source|change feed|\S+) +(.*)$/.exec(line);
  return { status: match?.[1] ?? '?', name: match?.[2] ?? '?', rest: match?.[3] ?? line };
}

function lineOf(stdout: string, name: string): string {
  return stdout.split('\n').find((line) => parseLine(line).name === name) ?? `(no ${name} line)`;
}

describe.runIf(postgresAvailable && redisAvailable)('idp doctor', () => {
  let db: TestDatabase;
  const dataDir = tempDir();
  let healthy: RunningServer;
  let misnamed: RunningServer;
  let storeless: RunningServer;
  let redis: Awaited<ReturnType<typeof startRedis>>;

  const baseEnv = () => ({ IDP_SECRET, IDP_DATA_DIR: dataDir.path, DATABASE_URL: db.url, REDIS_URL });
  /** The deployment's own configuration, as an operator on its host has it. */
  const envOf = (server: RunningServer, extra: Record<string, string> = {}) =>
    ({ ...baseEnv(), IDP_BASE_URL: server.url, HOST: '127.0.0.1', PORT: String(server.port), ...extra });

  beforeAll(async () => {
    db = await createTestDatabase();
    const added = await runIdp(
      ['clients', 'add', '--id', 'web', '--grant', 'authorization_code', '--scope', 'openid', '--redirect-uri', 'https://app.example/cb'],
      baseEnv(),
    );
    expect(added.code, added.stderr).toBe(0);
    redis = await startRedis();
    // startServer puts its own IDP_BASE_URL first and ours over it.
    [healthy, misnamed, storeless] = await Promise.all([
      startServer(baseEnv()),
      startServer({ ...baseEnv(), IDP_BASE_URL: 'http://id.example.test' }),
      startServer({ ...baseEnv(), REDIS_URL: redis.url }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([healthy?.stop(), misnamed?.stop(), storeless?.stop(), redis?.stop()]);
    await db?.drop();
    dataDir.remove();
  });

  it('passes a healthy deployment: every check ok or skipped with why, exit 0', async () => {
    const result = await runIdp(['doctor', '--url', healthy.url], envOf(healthy));
    expect({ code: result.code, stderr: result.stderr }).toStrictEqual({ code: 0, stderr: '' });
    const lines = result.stdout.trimEnd().split('\n').map(parseLine);
    expect(lines.map((l) => l.name)).toStrictEqual(NAMES);
    expect(lines.filter((l) => l.status !== 'ok').map((l) => `${l.status} ${l.name}`)).toStrictEqual(['skip service', 'skip https', 'skip sign-in source', 'skip mail']);
    expect(lineOf(result.stdout, 'issuer')).toContain(`${healthy.url}/, with all 7 endpoint URLs under it`);
    expect(lineOf(result.stdout, 'cookies')).toContain('idp_session: HttpOnly, SameSite=Lax, not Secure (http) (client web)');
    expect(lineOf(result.stdout, 'store')).toContain(`Redis at ${new URL(REDIS_URL).host} answers`);
  });

  it('prints one JSON document with --json', async () => {
    const result = await runIdp(['doctor', '--json'], envOf(healthy));
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: Array<{ name: string; status: string; detail: string; fix?: string }> };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toStrictEqual(NAMES);
    expect(report.checks.find((c) => c.name === 'jwks')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/the current signing key \S+ among them$/) });
  });

  it('names a base URL that disagrees with where the service is reached (issuer FAIL)', async () => {
    const result = await runIdp(['doctor', '--url', misnamed.url], envOf(misnamed, { IDP_BASE_URL: 'http://id.example.test' }));
    expect(result.code).toBe(1);
    // From the served document, or (when the service refuses a request for a host not its own)
    // from the configuration: either way the line names the issuer, the URL and the fix.
    const url = misnamed.url.replaceAll('.', '\\.');
    expect(lineOf(result.stdout, 'issuer')).toMatch(new RegExp(
      `^FAIL  issuer {10}issuer is "http://id\\.example\\.test/"( \\(IDP_BASE_URL\\))?, but the service is reached at ${url}/; ` +
        `fix: set IDP_BASE_URL to the public URL the browser uses \\(${url}\\)$`,
    ));
  });

  it('names a served issuer that disagrees with the URL used (localhost for 127.0.0.1: issuer FAIL)', async () => {
    // The service answers both loopback names, so the document itself carries the wrong issuer.
    const local = healthy.url.replace('127.0.0.1', 'localhost');
    const result = await runIdp(['doctor', '--url', local], envOf(healthy));
    expect(result.code).toBe(1);
    expect(parseLine(lineOf(result.stdout, 'discovery')).status).toBe('ok');
    expect(lineOf(result.stdout, 'issuer')).toBe(
      `FAIL  issuer          issuer is "${healthy.url}/", but the service is reached at ${local}/; ` +
        `fix: set IDP_BASE_URL to the public URL the browser uses (${local})`,
    );
  });

  it('warns (not ok) that IDP_TRUST_PROXY=true lets clients choose their address, and says what to set instead', async () => {
    const result = await runIdp(['doctor', '--url', healthy.url], envOf(healthy, { IDP_TRUST_PROXY: 'true' }));
    expect(lineOf(result.stdout, 'forwarded')).toBe(
      `warn  forwarded       ${new URL(healthy.url).host} answers; IDP_TRUST_PROXY=true believes the first X-Forwarded-For address, which any client writes: `
        + 'the per-address limits count the addresses clients choose; '
        + "fix: set IDP_TRUST_PROXY to the number of proxies in front (e.g. IDP_TRUST_PROXY=1) or the proxy's address",
    );
  });

  it('judges a proxy only against a listening address where something answers, not a configured one where nothing does', async () => {
    // The operator's shell has not the server's HOST and PORT: nothing listens at the address it names.
    const elsewhere = await freePort();
    const { HOST: _host, ...env } = envOf(healthy, { PORT: String(elsewhere), IDP_TRUST_PROXY: '1' });
    const result = await runIdp(['doctor', '--url', healthy.url], env);
    const line = lineOf(result.stdout, 'forwarded');
    expect(parseLine(line).status, line).toBe('skip');
    expect(line).toContain(`${new URL(healthy.url).host} answers, but nothing answers at 127.0.0.1:${elsewhere} (HOST:PORT) (connect ECONNREFUSED 127.0.0.1:${elsewhere})`);
    expect(line).not.toContain('forwards to');
  });

  it('names a stopped Redis (store FAIL)', async () => {
    await redis.stop();
    const result = await runIdp(['doctor'], envOf(storeless, { REDIS_URL: redis.url }));
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'store')).toMatch(
      new RegExp(`^FAIL  store +Redis at ${new URL(redis.url).host} does not answer: .+; fix: check REDIS_URL`),
    );
    expect(parseLine(lineOf(result.stdout, 'database')).status).toBe('ok');
  });

  it('names a clock that drifts from the database server (clock FAIL, from an injected clock)', async () => {
    const parsed = parseConfig(envOf(healthy));
    if (!parsed.ok) throw new Error(parsed.message);
    let durable: DurableStore | undefined;
    const context: CliContext = {
      config: parsed.config,
      secret: Buffer.from(IDP_SECRET, 'hex'),
      clock: () => Date.now() + 60_000,
      json: false,
      openDurable: async () => (durable ??= await openDurableStore({ databaseUrl: db.url })),
      mailer: () => NO_MAILER,
      closeMailer: async () => [],
      audit: () => {},
      out: () => {},
      err: () => {},
      readStdin: async () => '',
      runProgram: async () => undefined,
    };
    try {
      const report = await runDoctor(context, healthy.url);
      expect(report.ok).toBe(false);
      expect(report.checks.filter((c) => c.status === 'FAIL').map((c) => c.name)).toStrictEqual(['clock']);
      const clock = report.checks.find((c) => c.name === 'clock');
      expect(clock?.detail).toMatch(/^this machine's clock is (59\.\d|60\.\d) s ahead of the database server's/);
      expect(clock?.fix).toBe('sync the clocks (NTP)');
    } finally {
      await durable?.close();
    }
  });

  it('names a URL where nothing answers (discovery FAIL, exit 1)', async () => {
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const result = await runIdp(['doctor', '--json', '--url', nowhere], envOf(healthy));
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: Array<{ name: string; status: string; detail: string; fix?: string }> };
    expect(report.ok).toBe(false);
    // Only the reachability is named: the checks that need an answer skip instead of piling on.
    expect(report.checks.filter((c) => c.status === 'FAIL').map((c) => c.name)).toStrictEqual(['discovery']);
    expect(report.checks[0]).toMatchObject({
      name: 'discovery',
      status: 'FAIL',
      detail: `${nowhere}/.well-known/openid-configuration is not reachable: connect ECONNREFUSED ${nowhere.slice('http://'.length)}`,
      fix: expect.stringContaining('check that the service runs'),
    });
  });

  it('refuses a --url that is not an http(s) URL (2)', async () => {
    const result = await runIdp(['doctor', '--url', 'id.example.com'], envOf(healthy));
    expect({ code: result.code, stdout: result.stdout }).toStrictEqual({ code: 2, stdout: '' });
    expect(result.stderr.trimEnd()).toBe('--url "id.example.com": must be an absolute http or https URL (usage: idp doctor [--url URL] [--management-url URL])');
  });
});
