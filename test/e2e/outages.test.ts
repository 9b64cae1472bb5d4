/**
 * Outages, driven from outside: a Redis this test runs itself (stopped, frozen and started again
 * under requests), PostgreSQL connections terminated by the database, PostgreSQL behind a TCP
 * proxy whose network is cut or frozen, and SIGTERM during requests. While a service is away the
 * requests that need it fail fast with 503 temporarily_unavailable, /readyz says 503, /healthz
 * 200, the process stays up; it recovers by itself; no request leaves a half-done state.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { POSTGRES_ADMIN_URL, postgresAvailable, runSql } from '../helpers/services.ts';
import { startServer, type RunningServer } from '../helpers/process.ts';
import { waitUntil } from '../helpers/waits.ts';
import {
  ALICE, SERVICE_SECRET, TcpProxy, WEB_REDIRECT, WEB_SECRET, expectJsonError, expectNoInternals, rawRequest, seedOf, serviceClient, sleep,
  startDeployment, startOwnRedis, unanswered, webClient, type Deployment, type OwnRedis, type RawResponse,
} from './operations-support.ts';
import { Browser, authorize, basic, isSignInPage, pkce, readForm, type ClientCredentials } from './token-lifecycle-support.ts';

/** A request that needs the store and the database may take this long to fail while one is away. */
const FAIL_FAST_MS = 3000;
const WEB: ClientCredentials = { clientId: 'web', secret: WEB_SECRET };
const SERVICE: ClientCredentials = { clientId: 'service', secret: SERVICE_SECRET };

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/**
 * Alice signs in many times at once here (20 posts at SIGTERM, 6 sign-ins under terminated
 * connections): above the default IDP_LOGIN_MAX_FAILURES, and as many as the default
 * IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT, of which each password being checked holds one until it is
 * found right.
 */
const SIGN_INS_AT_ONCE = { IDP_LOGIN_MAX_FAILURES: '50', IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: '50' };

/** POST /connect/token on a connection of its own, with a deadline well above FAIL_FAST_MS. */
function tokenAt(server: RunningServer, who: ClientCredentials, fields: Record<string, string>, timeoutMs = 10_000): Promise<RawResponse> {
  return rawRequest(server.port, {
    method: 'POST', path: '/connect/token', timeoutMs,
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(who.clientId, who.secret ?? '') },
    body: form(fields),
  });
}

const clientCredentials = (server: RunningServer) => tokenAt(server, SERVICE, { grant_type: 'client_credentials', scope: 'orders.read' });
/**
 * A token request that needs the store: the code is looked up (and consumed) there. Client
 * credentials need it only now and then (the rate limit spends locally reserved slices of the
 * shared budget), so they are no probe for an outage. With the store up: 400 invalid_grant.
 */
const codeExchange = (server: RunningServer) =>
  tokenAt(server, WEB, { grant_type: 'authorization_code', code: randomBytes(32).toString('base64url'), redirect_uri: WEB_REDIRECT, code_verifier: 'v'.repeat(43) });
const refreshAt = (server: RunningServer, refreshToken: string, timeoutMs?: number) =>
  tokenAt(server, WEB, { grant_type: 'refresh_token', refresh_token: refreshToken }, timeoutMs);

/** What a process printed after its last log line (a crash report), or its last lines. */
function lastWords(server: RunningServer): string {
  const lines = server.output().trim().split('\n');
  let last = lines.length - 1;
  while (last >= 0 && !lines[last]?.startsWith('{')) last -= 1;
  const after = lines.slice(last + 1).filter((l) => !/^\s+at /.test(l) || /pg\/lib|ioredis/.test(l));
  return (after.length > 0 ? after : lines.slice(-3)).join('\n').slice(0, 1500);
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await work;
  return { value, ms: Date.now() - started };
}

function json(res: RawResponse): Record<string, unknown> {
  try {
    return JSON.parse(res.text) as Record<string, unknown>;
  } catch {
    return { unparsed: res.text };
  }
}

/** The answer while a dependency is away: 503 temporarily_unavailable, JSON, no-store, Retry-After, fast. */
function expectUnavailable(res: RawResponse, ms: number, what: string): void {
  expectJsonError(res, 503, 'temporarily_unavailable', what);
  expect(res.headers['retry-after'], `${what}: Retry-After`).toMatch(/^\d+$/);
  expectNoInternals(res.text, what);
  expect(ms, `${what}: answered after ${ms} ms`).toBeLessThan(FAIL_FAST_MS);
}

async function readiness(server: RunningServer): Promise<{ res: RawResponse; ms: number; body: Record<string, unknown> }> {
  const { value, ms } = await timed(rawRequest(server.port, { path: '/readyz', timeoutMs: 10_000 }));
  return { res: value, ms, body: json(value) };
}

/** Polls /readyz until 200 (the README promises the recovery, not its time); fails at once should the process exit. */
async function readyAgain(server: RunningServer): Promise<number> {
  const started = Date.now();
  const ready = async () => (await rawRequest(server.port, { path: '/readyz' })).status === 200;
  await waitUntil('ready again by itself', ready, { processes: [server.child], detail: () => lastWords(server), intervalMs: 100 });
  return Date.now() - started;
}

type Outcome = { status: number; ms: number; error?: string; body: string };

/**
 * Runs `during` while `loops` loops send `request` one after the other (50 ms apart), and returns
 * what each request got (status, or the connection error) and how long it took. While a service
 * goes away and comes back, each must be answered, fast.
 */
async function underLoad(request: () => Promise<RawResponse>, during: () => Promise<void>, loops = 1): Promise<Outcome[]> {
  const results: Outcome[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const started = Date.now();
      try {
        const res = await request();
        results.push({ status: res.status, ms: Date.now() - started, body: res.text.slice(0, 200) });
      } catch (error) {
        results.push({ status: 0, ms: Date.now() - started, error: String(error), body: '' });
      }
      await sleep(50);
    }
  };
  const all = Promise.all(Array.from({ length: loops }, loop));
  try {
    await sleep(200);
    await during();
  } finally {
    running = false;
    await all;
  }
  return results;
}

function expectAnsweredFast(results: Outcome[], what: string, normal: number[] = [200]): void {
  expect(results.length, `${what}: requests ran`).toBeGreaterThan(3);
  for (const r of results) {
    expect(r.error, `${what}: a request failed at the connection`).toBeUndefined();
    expect([...normal, 503], `${what}: ${r.status} ${r.body}`).toContain(r.status);
    expect(r.ms, `${what}: a request took ${r.ms} ms`).toBeLessThan(FAIL_FAST_MS + 500);
  }
}

describe.runIf(postgresAvailable)('outages of Redis and PostgreSQL, and SIGTERM', () => {
  let redis: OwnRedis;
  let deployment: Deployment;
  /** On the database directly, with the test's own Redis. */
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    redis = await startOwnRedis();
    deployment = await startDeployment({
      seed: seedOf([webClient('web'), serviceClient('service')], [ALICE]),
      env: { REDIS_URL: redis.url, ...SIGN_INS_AT_ONCE },
    });
    server = deployment.servers[0] as RunningServer;
    browser = new Browser();
  });
  afterAll(async () => {
    await deployment?.stop();
    await redis?.stop();
  });

  /** Tokens for alice at `web` (with a refresh token), through `at`'s pages. */
  async function userTokens(at: RunningServer): Promise<{ access_token: string; refresh_token: string }> {
    const { code, verifier } = await authorize(browser, at.url, 'web', WEB_REDIRECT, ALICE, 'openid offline_access');
    const res = await tokenAt(at, WEB, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    expect(res.status, res.text).toBe(200);
    return json(res) as { access_token: string; refresh_token: string };
  }

  describe('Redis', () => {
    it('stopped under requests: 503 temporarily_unavailable fast, /readyz 503, /healthz 200; back by itself when Redis returns', async () => {
      expect((await clientCredentials(server)).status).toBe(200);
      expect((await readiness(server)).res.status).toBe(200);
      const results = await underLoad(() => codeExchange(server), async () => {
        await redis.stop();
        try {
          const { value: first, ms } = await timed(codeExchange(server));
          expectUnavailable(first, ms, 'token endpoint, Redis stopped');
          const burst = await Promise.all([1, 2, 3, 4, 5].map(() => timed(codeExchange(server))));
          for (const { value, ms: each } of burst) expectUnavailable(value, each, 'token endpoint, Redis stopped (concurrent)');

          const ready = await readiness(server);
          expect(ready.res.status, ready.res.text).toBe(503);
          expect(ready.body).toMatchObject({ status: 'unavailable', store: 'unavailable', database: 'ok' });
          expect(ready.ms).toBeLessThan(FAIL_FAST_MS);
          expect((await rawRequest(server.port, { path: '/healthz' })).status).toBe(200);

          // A browser endpoint that needs the store: the service's own error page, 503.
          const { challenge } = pkce();
          const query = new URLSearchParams({
            client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256',
          });
          const page = await timed(rawRequest(server.port, { path: `/connect/authorize?${query}` }));
          expect(page.value.status, page.value.text.slice(0, 300)).toBe(503);
          expect(page.value.headers['content-type']).toMatch(/^text\/html/);
          expect(page.value.text).toContain('temporarily_unavailable');
          expectNoInternals(page.value.text, 'authorize page, Redis stopped');
          expect(page.ms).toBeLessThan(FAIL_FAST_MS);

          await sleep(1500);
          expect(server.child.exitCode, 'the process stays up').toBeNull();
        } finally {
          await redis.start();
        }
        await readyAgain(server);
      });
      expect((await clientCredentials(server)).status).toBe(200);
      expectAnsweredFast(results, 'code exchanges while Redis went away and came back', [400]);
      expect(results.filter((r) => r.status === 503).length, 'some requests met the outage').toBeGreaterThan(0);
    });

    it('frozen (SIGSTOP: connected, never answering): 503 temporarily_unavailable within the deadline, not a hang, not a 500; back after SIGCONT', async () => {
      await readyAgain(server);
      expect((await clientCredentials(server)).status).toBe(200);
      redis.freeze();
      try {
        const [{ value: first, ms }, ready] = await Promise.all([timed(codeExchange(server)), readiness(server)]);
        expectUnavailable(first, ms, 'token endpoint, Redis frozen');
        expect(ready.res.status).toBe(503);
        expect(ready.body).toMatchObject({ store: 'unavailable', database: 'ok' });
        expect(ready.ms).toBeLessThan(FAIL_FAST_MS);
        expect((await rawRequest(server.port, { path: '/healthz' })).status).toBe(200);
        expect(server.child.exitCode).toBeNull();
      } finally {
        redis.thaw();
      }
      await readyAgain(server);
      expect((await clientCredentials(server)).status).toBe(200);
    });

    it('never loses both refresh tokens when a refresh meets a Redis outage', async () => {
      await readyAgain(server);
      const tokens = await userTokens(server);
      await redis.stop();
      const { value: during, ms } = await timed(refreshAt(server, tokens.refresh_token));
      expect(ms).toBeLessThan(FAIL_FAST_MS);
      await redis.start();
      await readyAgain(server);
      if (during.status === 200) {
        const next = await refreshAt(server, String(json(during).refresh_token));
        expect(next.status, `the new refresh token works: ${next.text}`).toBe(200);
      } else {
        expectJsonError(during, 503, 'temporarily_unavailable', 'refresh while Redis is away');
        const retried = await refreshAt(server, tokens.refresh_token);
        expect(retried.status, `the old refresh token still works: ${retried.text}`).toBe(200);
        const next = await refreshAt(server, String(json(retried).refresh_token));
        expect(next.status, next.text).toBe(200);
      }
    });
  });

  describe('PostgreSQL', () => {
    const terminateBackends = async () =>
      runSql<{ terminated: boolean }>(POSTGRES_ADMIN_URL, 'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [
        new URL(deployment.db.url).pathname.slice(1),
      ]);
    /** The backends of the instances' LISTEN connections. */
    const listenerPids = async () =>
      (await runSql<{ pid: number }>(POSTGRES_ADMIN_URL, `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'LISTEN%'`, [
        new URL(deployment.db.url).pathname.slice(1),
      ])).map((row) => row.pid).sort();
    const introspectRefresh = (at: RunningServer, refreshToken: string) =>
      rawRequest(at.port, {
        method: 'POST', path: '/connect/introspect', timeoutMs: 10_000,
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('web', WEB_SECRET) },
        body: form({ token: refreshToken, token_type_hint: 'refresh_token' }),
      });
    const introspectAsService = (at: RunningServer, accessToken: string) =>
      rawRequest(at.port, {
        method: 'POST', path: '/connect/introspect',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('service', SERVICE_SECRET) },
        body: form({ token: accessToken }),
      });

    /** Each test gets an instance of its own: a crash of one must not take the next test with it. */
    describe('connections terminated by the database (pg_terminate_backend)', () => {
      let target: RunningServer;
      beforeEach(async () => {
        target = await startServer({ ...deployment.env, REDIS_URL: redis.url, LOG_LEVEL: 'info', ...SIGN_INS_AT_ONCE });
      });
      afterEach(async () => {
        await target?.stop();
      });

      it('backends terminated while requests run: no 500, requests succeed again, and the clients LISTEN reconnects', async () => {
        const tokens = await userTokens(target);
        const listenersBefore = await listenerPids();
        expect(listenersBefore.length, 'the instances LISTEN for client changes').toBeGreaterThanOrEqual(2);
        const results = await underLoad(() => introspectRefresh(target, tokens.refresh_token), async () => {
          const terminated = await terminateBackends();
          expect(terminated.length, 'the pool and the listener were terminated').toBeGreaterThanOrEqual(2);
          await sleep(300);
          await terminateBackends();
          await sleep(500);
        }, 3);
        expect(target.child.exitCode, `the process stays up; its last words:\n${lastWords(target)}`).toBeNull();
        expectAnsweredFast(results, 'introspection while backends are terminated');

        const after = await introspectRefresh(target, tokens.refresh_token);
        expect(after.status, after.text).toBe(200);
        expect(json(after).active).toBe(true);
        expect((await readiness(target)).res.status).toBe(200);

        // Every LISTEN connection comes back (on a new backend) ...
        const started = Date.now();
        const reconnected = (pids: number[]) => pids.length === listenersBefore.length && !pids.some((pid) => listenersBefore.includes(pid));
        let listenersAfter = await listenerPids();
        while (!reconnected(listenersAfter) && Date.now() - started < 5000) {
          await sleep(100);
          listenersAfter = await listenerPids();
        }
        expect(listenersAfter.length, 'as many LISTEN connections as before').toBe(listenersBefore.length);
        expect(listenersAfter.filter((pid) => listenersBefore.includes(pid)), 'all of them new').toStrictEqual([]);
        // ... and delivers: a client cached after the termination is seen disabled within two seconds of an SQL edit.
        const issued = await clientCredentials(target);
        expect(issued.status, issued.text).toBe(200);
        const accessToken = String(json(issued).access_token);
        expect((await introspectAsService(target, accessToken)).status).toBe(200);
        await deployment.sql(`UPDATE clients SET enabled = false WHERE client_id = 'service'`);
        try {
          const editedAt = Date.now();
          while ((await introspectAsService(target, accessToken)).status === 200) {
            expect(Date.now() - editedAt, 'the SQL edit is seen after the LISTEN reconnected').toBeLessThan(2000);
            await sleep(20);
          }
          expect((await introspectAsService(target, accessToken)).status).toBe(401);
        } finally {
          await deployment.sql(`UPDATE clients SET enabled = true WHERE client_id = 'service'`);
        }
      });

      it('never loses both refresh tokens when refreshes meet terminated connections', async () => {
        const families = await Promise.all([1, 2, 3, 4, 5, 6].map(async () => (await userTokens(target)).refresh_token));
        const refreshes = Promise.all(families.map(async (old) => ({
          old,
          res: await refreshAt(target, old).catch((error: unknown) => unanswered(error, 'no response')),
        })));
        await sleep(5);
        await terminateBackends();
        const outcomes = await refreshes;
        await sleep(300);
        expect(target.child.exitCode, `the process stays up; its last words:\n${lastWords(target)}`).toBeNull();
        for (const { old, res } of outcomes) {
          expect([200, 503], `${res.status} ${res.text}`).toContain(res.status);
          // Whatever happened, the client holds a working refresh token: the new one, or the old one.
          const holding = res.status === 200 ? String(json(res).refresh_token) : old;
          const next = await refreshAt(target, holding);
          expect(next.status, `after a ${res.status} the token the client holds works: ${next.text}`).toBe(200);
        }
      });
    });

    /**
     * Each test gets an instance of its own whose DATABASE_URL goes through a TCP proxy: a
     * network the test cuts (connections reset, new ones refused) or freezes (connections stay
     * open, no byte goes through: a partition, or a database host that hangs).
     */
    describe('behind a network the test controls', () => {
      let proxy: TcpProxy;
      let proxied: RunningServer;

      beforeEach(async () => {
        const direct = new URL(deployment.db.url);
        proxy = await TcpProxy.start({ host: direct.hostname, port: Number(direct.port || 5432) });
        const url = new URL(deployment.db.url);
        url.host = `127.0.0.1:${proxy.port}`;
        proxied = await startServer({ ...deployment.env, DATABASE_URL: url.href, REDIS_URL: redis.url, LOG_LEVEL: 'info', ...SIGN_INS_AT_ONCE });
      });
      afterEach(async () => {
        // The network heals first: a request hung on it would hold up the shutdown.
        await proxy?.restore();
        await proxied?.stop();
        await proxy?.close();
      });

      it('cut (connections reset, then refused): 503 fast, /readyz 503, /healthz 200; back by itself', async () => {
        const fresh = await userTokens(proxied);
        await proxy.cut();
        try {
          const { value, ms } = await timed(refreshAt(proxied, fresh.refresh_token));
          expectUnavailable(value, ms, 'refresh, database unreachable');
          const ready = await readiness(proxied);
          expect(ready.res.status).toBe(503);
          expect(ready.body).toMatchObject({ status: 'unavailable', database: 'unavailable', store: 'ok' });
          expect(ready.ms).toBeLessThan(FAIL_FAST_MS);
          expect((await rawRequest(proxied.port, { path: '/healthz' })).status).toBe(200);
          await sleep(1000);
          expect(proxied.child.exitCode, 'the process stays up').toBeNull();
        } finally {
          await proxy.restore();
        }
        await readyAgain(proxied);
        const again = await refreshAt(proxied, fresh.refresh_token);
        expect(again.status, `the refresh token refused during the outage works now: ${again.text}`).toBe(200);
      });

      it('a password post that meets the cut database is no guess: after more of them than IDP_LOGIN_MAX_FAILURES, the password signs in once it is back', async () => {
        const signInBrowser = new Browser();
        const query = new URLSearchParams({
          client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: pkce().challenge, code_challenge_method: 'S256',
        });
        const page = await signInBrowser.follow(await signInBrowser.get(`${proxied.url}/connect/authorize?${query}`), proxied.url);
        expect(isSignInPage(page), page.body.slice(0, 200)).toBe(true);
        const f = readForm(page.body, page.url);
        const post = () => signInBrowser.post(f.action, { ...f.fields, username: ALICE.username, password: ALICE.password });
        await proxy.cut();
        try {
          // The throttle's attempts live in Redis, which is up: each is taken, then the account lookup fails.
          for (let i = 0; i < Number(SIGN_INS_AT_ONCE.IDP_LOGIN_MAX_FAILURES) + 2; i++) expect((await post()).status, `post ${i + 1}`).toBe(503);
        } finally {
          await proxy.restore();
        }
        await readyAgain(proxied);
        const after = await post();
        expect(after.status, `signed in, not throttled: ${after.body.slice(0, 300)}`).toBe(302);
        expect(after.location).toMatch(/^https:\/\/rp\.test\/cb\?code=/);
      });

      it('frozen: a request that needs the database answers 503 within the deadline instead of hanging, and /readyz says 503', async () => {
        const fresh = await userTokens(proxied);
        // The pool holds idle connections now: the next query goes out on one of them.
        proxy.freeze();
        const { value, ms } = await timed(refreshAt(proxied, fresh.refresh_token, 6000)
          .catch((error: unknown) => unanswered(error, 'no answer within 6 s')));
        expectUnavailable(value, ms, 'refresh, database frozen');
        const ready = await readiness(proxied);
        expect(ready.res.status).toBe(503);
        expect(ready.body).toMatchObject({ status: 'unavailable', database: 'unavailable' });
        expect(ready.ms).toBeLessThan(FAIL_FAST_MS);
        expect((await rawRequest(proxied.port, { path: '/healthz' })).status).toBe(200);
      });

      it('frozen, then healed with connections reset under queries in flight: the process stays up and recovers by itself', async () => {
        const fresh = await userTokens(proxied);
        proxy.freeze();
        // Queries go out on the frozen connections and wait there.
        const pending = [refreshAt(proxied, fresh.refresh_token, 15_000), introspectRefresh(proxied, fresh.refresh_token)].map((p) =>
          p.catch(unanswered));
        await sleep(500);
        await proxy.restore();
        await sleep(1000);
        const exitCode = proxied.child.exitCode;
        expect(exitCode, `the process stays up; its last words:\n${lastWords(proxied)}`).toBeNull();
        for (const res of await Promise.all(pending)) {
          expect([200, 503], `a request in flight while the network healed: ${res.status} ${res.text.slice(0, 200)}`).toContain(res.status);
        }
        await readyAgain(proxied);
        const holding = await refreshAt(proxied, fresh.refresh_token);
        expect(holding.status, holding.text).toBe(200);
      });
    });
  });

  /** Waits until the server has read `count` sign-in posts: answered ones plus those in flight. */
  async function signInPostsReceived(server: RunningServer, count: number): Promise<void> {
    const received = async () => {
      const { text } = await rawRequest(server.port, { path: '/metrics' });
      const value = (pattern: RegExp) => [...text.matchAll(pattern)].reduce((total, m) => total + Number(m[1]), 0);
      // The scrape itself is one of the requests in flight.
      const inFlight = value(/^idp_http_requests_in_flight (\d+)$/gm) - 1;
      const answered = value(/^idp_http_requests_total\{route="\/interaction\/:id\/sign-in",method="POST",[^}]*\} (\d+)$/gm);
      return inFlight + answered >= count;
    };
    await waitUntil(`the server read ${count} sign-in posts`, received, { processes: [server.child], intervalMs: 10 });
  }

  describe('SIGTERM', () => {
    it('drains every request in flight (complete responses), then exits 0 within a few seconds', async () => {
      const doomed = await startServer({ ...deployment.env, REDIS_URL: redis.url, LOG_LEVEL: 'info', ...SIGN_INS_AT_ONCE });
      try {
        // 20 browsers at the sign-in page; their password posts (argon2) are the slow requests.
        const forms = await Promise.all(Array.from({ length: 20 }, async () => {
          const b = new Browser();
          const { challenge } = pkce();
          const query = new URLSearchParams({
            client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256',
          });
          const page = await b.follow(await b.get(`${doomed.url}/connect/authorize?${query}`), doomed.url);
          expect(isSignInPage(page), page.body.slice(0, 200)).toBe(true);
          const f = readForm(page.body, page.url);
          return { path: new URL(f.action).pathname, cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join('; '), fields: f.fields };
        }));
        const exited = new Promise<{ code: number | null; at: number }>((resolve) => doomed.child.once('exit', (code) => resolve({ code, at: Date.now() })));
        const requests = forms.map(async (f) => {
          try {
            return await rawRequest(doomed.port, {
              method: 'POST', path: f.path,
              headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: f.cookie },
              body: form({ ...f.fields, username: ALICE.username, password: ALICE.password }),
            });
          } catch (error) {
            return unanswered(error);
          }
        });
        // Every request is read by the server before the signal (a request that reaches a
        // draining server is rightly refused with 503, for the proxy to retry elsewhere).
        await signInPostsReceived(doomed, forms.length);
        const signalledAt = Date.now();
        doomed.child.kill('SIGTERM');
        const answers = await Promise.all(requests);
        for (const answer of answers) {
          expect(answer.status, `a request in flight at SIGTERM: ${answer.text.slice(0, 200)}`).toBe(302);
          expect(String(answer.headers.location), 'signed in: back to the client with a code').toMatch(/^https:\/\/rp\.test\/cb\?code=/);
        }
        expect(answers.filter((a) => a.at > signalledAt).length, 'some requests were still in flight at the signal').toBeGreaterThan(0);
        // The exit is the event awaited. The requests in flight take what the machine gives them;
        // the closing that follows the last of them is the service's own.
        const { code, at } = await exited;
        expect(code, `exit code; output: ${doomed.output().slice(-500)}`).toBe(0);
        const drainedAt = Math.max(signalledAt, ...answers.map((a) => a.at));
        expect(at - drainedAt, 'exited within five seconds of SIGTERM and its last request in flight').toBeLessThan(5000);
        expect(doomed.output()).toContain('shutting down');
        // Nothing listens any more.
        await expect(rawRequest(doomed.port, { path: '/healthz', timeoutMs: 2000 })).rejects.toThrow();
      } finally {
        await doomed.stop();
      }
    });
  });
});
