/**
 * The master secret as an operator meets it: a wrong IDP_SECRET stops the start and every
 * command that seals, with one line naming it; `/readyz` and `idp doctor` say when keys do not
 * open; and the secret changes without downtime (IDP_SECRET_PREVIOUS, `idp secrets reseal`)
 * across two instances under traffic, losing no session, refresh token or TOTP enrolment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp, startServer, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable } from '../helpers/services.ts';
import { awayFromStepEnd, describePage, isEnrolPage, isOtpPage, kindOf, nowSeconds, submit, totp, type Page } from './account-support.ts';
import {
  ALICE, Balancer, IDP_SECRET, MIA, SERVICE_SECRET, WEB_REDIRECT, WEB_SECRET, seedOf, serviceClient, sleep, startDeployment, startOwnRedis, webClient,
  type Deployment, type OwnRedis,
} from './operations-support.ts';
import { Browser, authorize, isSignInPage, pkce, refresh, token, type ClientCredentials } from './token-lifecycle-support.ts';

/** The secret the deployments were set up with (operations-support), and the next one, as base64 (`openssl rand -base64 32`). */
const OLD = IDP_SECRET;
const NEW = Buffer.alloc(32, 0x5b).toString('base64');
const WEB: ClientCredentials = { clientId: 'web', secret: WEB_SECRET };
const SERVICE: ClientCredentials = { clientId: 'service', secret: SERVICE_SECRET };
const TOM = { username: 'tom', password: 'his long and secret password 9' };

function expectWrongSecretLine(result: { code: number | null; stderr: string }): void {
  expect(result.code, result.stderr).toBe(2);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^IDP_SECRET is not the secret this database was set up with/);
  expect(lines[0]).toContain('IDP_SECRET_PREVIOUS');
  expect(lines[0]).toContain('idp secrets reseal');
}

async function readyz(server: RunningServer): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${server.url}/readyz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe.runIf(postgresAvailable)('idp secrets reseal after a leak of the old secret', () => {
  it('says to drop IDP_SECRET_PREVIOUS at once, and what that costs', async () => {
    const db = await createMigratedTestDatabase();
    try {
      // The check value is sealed under the old secret by the first command that seals.
      expect((await runIdp(['keys', 'list'], { DATABASE_URL: db.url, IDP_SECRET: OLD })).code).toBe(0);
      const resealed = await runIdp(['secrets', 'reseal'], { DATABASE_URL: db.url, IDP_SECRET: NEW, IDP_SECRET_PREVIOUS: OLD });
      expect(resealed.code, resealed.stderr).toBe(0);
      expect(resealed.stdout.trimEnd().split('\n')[1]).toBe('nothing in the database needs IDP_SECRET_PREVIOUS any more. If the old secret leaked, remove it now: '
        + 'the refresh tokens it signed are then refused and their users sign in again. Otherwise those not used since '
        + 'the change still need it until IDP_REFRESH_TOKEN_IDLE_LIFETIME has passed: remove it then');
    } finally {
      await db.drop();
    }
  });
});

describe.runIf(postgresAvailable)('a wrong master secret', () => {
  let deployment: Deployment;
  beforeAll(async () => {
    deployment = await startDeployment({ seed: seedOf([serviceClient()], [ALICE]) });
  });
  afterAll(async () => {
    await deployment?.stop();
  });
  const withSecret = (secret: string, extra: Record<string, string> = {}) => ({ ...deployment.env, IDP_SECRET: secret, ...extra });

  it('stops `idp serve` and the commands that seal with one line naming IDP_SECRET (exit 2)', async () => {
    expectWrongSecretLine(await runIdp(['serve'], withSecret(NEW)));
    expectWrongSecretLine(await runIdp(['keys', 'rotate'], withSecret(NEW)));
    expectWrongSecretLine(await runIdp(['secrets', 'reseal'], withSecret(NEW)));
    // A previous secret that is not the right one either changes nothing.
    expectWrongSecretLine(await runIdp(['serve'], withSecret(NEW, { IDP_SECRET_PREVIOUS: 'ab'.repeat(32) })));
    // Nothing was sealed under the wrong secret: the right one still opens all.
    expect((await deployment.sql<{ n: string }>('SELECT count(*) AS n FROM signing_keys'))[0]?.n).toBe('1');
  });

  it('is told by `idp doctor`, with what to do', async () => {
    const doctor = await runIdp(['doctor', '--json'], withSecret(NEW, { IDP_BASE_URL: deployment.servers[0]?.url ?? '' }));
    const checks = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string; detail: string; fix?: string }> }).checks;
    const secret = checks.find((c) => c.name === 'secret');
    expect(secret).toMatchObject({ status: 'FAIL' });
    expect(secret?.fix).toContain('IDP_SECRET_PREVIOUS');
    const right = await runIdp(['doctor', '--json'], withSecret(OLD, { IDP_BASE_URL: deployment.servers[0]?.url ?? '' }));
    expect((JSON.parse(right.stdout) as { checks: Array<{ name: string; status: string; detail: string }> }).checks.find((c) => c.name === 'secret'))
      .toMatchObject({ status: 'ok', detail: 'IDP_SECRET opens everything in the database' });
  });

  it('is found on a database from before the check value, by its signing key', async () => {
    await deployment.sql('DELETE FROM secret_check');
    expectWrongSecretLine(await runIdp(['serve'], withSecret(NEW)));
    // The right secret is taken and the check value written under it.
    expect((await runIdp(['keys', 'list'], withSecret(OLD))).code).toBe(0);
    expect(await deployment.sql('SELECT 1 FROM secret_check')).toHaveLength(1);
    expectWrongSecretLine(await runIdp(['serve'], withSecret(NEW)));
  });

  it('makes /readyz answer 503 when the signing key does not open', async () => {
    const server = deployment.servers[0] as RunningServer;
    expect(await readyz(server)).toMatchObject({ status: 200, body: { status: 'ready', signing_key: 'ok' } });
    // What an instance with another secret would leave behind, written as SQL: a key it cannot open.
    const [key] = await deployment.sql<{ kid: string; private_jwk_sealed: string }>("SELECT kid, private_jwk_sealed FROM signing_keys WHERE state = 'current'");
    await deployment.sql("UPDATE signing_keys SET private_jwk_sealed = 'v1.AAAAAAAAAAAAAAAA.AAAA.AAAAAAAAAAAAAAAAAAAAAA' WHERE kid = $1", [key?.kid]);
    try {
      let answer = await readyz(server);
      for (let i = 0; i < 50 && answer.status === 200; i++) {
        await sleep(100);
        answer = await readyz(server);
      }
      expect(answer).toMatchObject({ status: 503, body: { status: 'unavailable', database: 'ok', signing_key: 'unavailable' } });
      // `idp doctor` points at the secret, not at the proxy.
      const doctor = await runIdp(['doctor', '--json'], withSecret(OLD, { IDP_BASE_URL: server.url }));
      const checks = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; status: string; detail: string; fix?: string }> }).checks;
      expect(checks.find((c) => c.name === 'jwks')).toMatchObject({ status: 'FAIL', fix: expect.stringContaining('secret check') });
      expect(checks.find((c) => c.name === 'secret')).toMatchObject({ status: 'FAIL', detail: expect.stringContaining(`signing key ${key?.kid} opens under none of the secrets`) });
    } finally {
      await deployment.sql('UPDATE signing_keys SET private_jwk_sealed = $2 WHERE kid = $1', [key?.kid, key?.private_jwk_sealed]);
    }
    let answer = await readyz(server);
    for (let i = 0; i < 50 && answer.status !== 200; i++) {
      await sleep(100);
      answer = await readyz(server);
    }
    expect(answer.status).toBe(200);
  });
});

describe.runIf(postgresAvailable)('changing the master secret across two instances under traffic', () => {
  let redis: OwnRedis;
  let lb: Balancer;
  let deployment: Deployment;
  const servers: RunningServer[] = [];
  let base: string;

  beforeAll(async () => {
    [redis, lb] = await Promise.all([startOwnRedis(), Balancer.start()]);
    base = lb.url;
    deployment = await startDeployment({
      seed: seedOf([webClient('web'), serviceClient('service')], [ALICE, MIA, TOM]),
      env: { IDP_BASE_URL: base, REDIS_URL: redis.url, IDP_TRUST_PROXY: 'true', IDP_TOKEN_RATE_LIMIT: '100000' },
      instances: 2,
    });
    servers.push(...deployment.servers);
    // Tom enrols in the second factor at his next sign-in, while the secret changes.
    expect((await deployment.idp(['users', 'require-mfa', TOM.username])).code).toBe(0);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await deployment?.db.drop();
    await lb?.close();
    await redis?.stop();
  });

  /** Restarts instance `i` with these secrets while the balancer sends everything to the other. */
  async function restart(i: number, secrets: { IDP_SECRET: string; IDP_SECRET_PREVIOUS?: string }): Promise<void> {
    const other = servers[1 - i] as RunningServer;
    lb.use(other);
    await sleep(50);
    await servers[i]?.stop();
    servers[i] = await startServer({
      ...deployment.env, IDP_BASE_URL: base, REDIS_URL: redis.url, IDP_TRUST_PROXY: 'true', IDP_TOKEN_RATE_LIMIT: '100000', ...secrets,
    });
  }

  /** Requests every 30 ms until stopped: a token for the service client, and a refresh chain of Alice's. */
  function traffic(firstRefreshToken: string) {
    let running = true;
    const failures: string[] = [];
    let requests = 0;
    let refreshToken = firstRefreshToken;
    const loop = (async () => {
      while (running) {
        const issued = await token(base, SERVICE, { grant_type: 'client_credentials', scope: 'orders.read' });
        if (issued.status !== 200) failures.push(`client_credentials ${issued.status} ${issued.text}`);
        const refreshed = await refresh(base, WEB, refreshToken);
        if (refreshed.status === 200) refreshToken = String(refreshed.body.refresh_token);
        else failures.push(`refresh ${refreshed.status} ${refreshed.text}`);
        requests += 2;
        await sleep(30);
      }
    })();
    return {
      async stop() {
        running = false;
        await loop;
        return { failures, requests, refreshToken };
      },
    };
  }

  /** Tokens for the browser's signed-in session, without a page: the session still holds. */
  async function tokensWithoutPage(browser: Browser): Promise<Record<string, unknown>> {
    const { challenge, verifier } = pkce();
    const query = new URLSearchParams({
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid offline_access', code_challenge: challenge, code_challenge_method: 'S256', state: 'again',
    });
    const page = await browser.get(`${base}/connect/authorize?${query}`);
    expect(page.status, `the session is gone: ${page.status} ${page.body.slice(0, 200)}`).toBe(302);
    const code = new URL(page.location ?? '').searchParams.get('code') ?? '';
    const answer = await token(base, WEB, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    expect(answer.status, answer.text).toBe(200);
    return answer.body;
  }

  /** A new browser past the password step of `who`, through the balancer. */
  async function pastPassword(who: { username: string; password: string }): Promise<{ browser: Browser; page: Page }> {
    const browser = new Browser();
    const { challenge } = pkce();
    const query = new URLSearchParams({
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256', state: 'mfa',
    });
    const start = await browser.follow(await browser.get(`${base}/connect/authorize?${query}`), base);
    expect(isSignInPage(start), start.body.slice(0, 300)).toBe(true);
    return { browser, page: await submit(browser, start, base, { username: who.username, password: who.password }) };
  }

  /** Signs a user in with the TOTP code of `secret` for `step` (0: now, 1: the next 30 s step). */
  async function signInWithTotp(who: { username: string; password: string }, secret: string, step: number): Promise<void> {
    const { browser, page } = await pastPassword(who);
    expect(isOtpPage(page), describePage(page)).toBe(true);
    const done = await submit(browser, page, base, { otp: await totp(secret, nowSeconds() + 30 * step) });
    expect(kindOf(done), describePage(done)).toBe('redirect');
  }

  it('keeps sessions, refresh tokens, TOTP secrets and an enrolment in progress working through IDP_SECRET_PREVIOUS, then `idp secrets reseal`', async () => {
    const [first, second] = servers as [RunningServer, RunningServer];
    // Made under the old secret: a browser session, a refresh token, and Mia's TOTP secret (seeded).
    lb.use(first);
    const browser = new Browser();
    const { code, verifier } = await authorize(browser, base, 'web', WEB_REDIRECT, ALICE, 'openid offline_access');
    const tokens = await token(base, WEB, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    expect(tokens.status, tokens.text).toBe(200);
    const untouched = String((await tokensWithoutPage(browser)).refresh_token);
    lb.use(second);
    const load = traffic(String(tokens.body.refresh_token));
    let during: Awaited<ReturnType<typeof load.stop>>;
    let tomSecret: string;
    try {
      // Step 1: every instance learns the new secret, still sealing under the old one.
      await restart(0, { IDP_SECRET: OLD, IDP_SECRET_PREVIOUS: NEW });
      await restart(1, { IDP_SECRET: OLD, IDP_SECRET_PREVIOUS: NEW });
      // Step 2: the new secret seals, the old one still opens. Mid-way the instances differ, and
      // each opens what the other sealed.
      await restart(0, { IDP_SECRET: NEW, IDP_SECRET_PREVIOUS: OLD });
      // Tom's enrolment begins at the instance sealing under the new secret and is confirmed at
      // the one still sealing under the old.
      await awayFromStepEnd(8);
      lb.use(servers[0] as RunningServer);
      const enrolling = await pastPassword(TOM);
      expect(isEnrolPage(enrolling.page), describePage(enrolling.page)).toBe(true);
      tomSecret = (/<code>([^<]*)<\/code>/.exec(enrolling.page.body)?.[1] ?? '').replace(/\s+/g, '');
      lb.use(servers[1] as RunningServer);
      // The enrolment's recovery codes are shown once; "Continue" goes on to the client.
      const codes = await submit(enrolling.browser, enrolling.page, base, { otp: await totp(tomSecret, nowSeconds()) });
      expect(kindOf(codes), describePage(codes)).toBe('recovery-codes');
      const enrolled = await submit(enrolling.browser, codes, base, {});
      expect(kindOf(enrolled), describePage(enrolled)).toBe('redirect');
      for (const server of [servers[0], servers[1], servers[0], servers[1]]) {
        lb.use(server as RunningServer);
        await sleep(300);
      }
      await restart(1, { IDP_SECRET: NEW, IDP_SECRET_PREVIOUS: OLD });
      await sleep(300);
    } finally {
      // Also when a step fails: no request may still run when the instances are stopped.
      during = await load.stop();
    }
    expect(during.failures, during.failures.slice(0, 3).join('\n')).toStrictEqual([]);
    expect(during.requests).toBeGreaterThan(20);

    for (const server of servers) {
      lb.use(server);
      await tokensWithoutPage(browser);
    }
    await awayFromStepEnd(8);
    await signInWithTotp(MIA, MIA.totp_secret, 0);

    const doctorEnv = { ...deployment.env, IDP_SECRET: NEW, IDP_SECRET_PREVIOUS: OLD, IDP_BASE_URL: base, REDIS_URL: redis.url };
    const before = await runIdp(['doctor', '--json'], doctorEnv);
    const secretCheck = (out: string) => (JSON.parse(out) as { checks: Array<{ name: string; status: string; detail: string }> }).checks.find((c) => c.name === 'secret');
    expect(secretCheck(before.stdout)?.detail).toMatch(/^IDP_SECRET_PREVIOUS is still needed: 1 signing key\(s\), 2 TOTP secret\(s\) and the check value/);

    const resealed = await runIdp(['secrets', 'reseal', '--json'], doctorEnv);
    expect(resealed.code, resealed.stderr).toBe(0);
    expect(JSON.parse(resealed.stdout)).toStrictEqual({ signing_keys: 1, totp_secrets: 2, webhook_secrets: 0, check_value: true });
    expect(secretCheck((await runIdp(['doctor', '--json'], doctorEnv)).stdout)?.detail).toMatch(/^IDP_SECRET opens everything in the database: IDP_SECRET_PREVIOUS is no longer needed/);

    // Step 3: the old secret is gone.
    await restart(0, { IDP_SECRET: NEW });
    await restart(1, { IDP_SECRET: NEW });
    expect((await runIdp(['serve'], { ...deployment.env, IDP_SECRET: OLD })).code, 'the old secret alone is now the wrong one').toBe(2);
    for (const server of servers) {
      lb.use(server);
      await tokensWithoutPage(browser);
      const again = await refresh(base, WEB, during.refreshToken);
      expect(again.status, again.text).toBe(200);
      during.refreshToken = String(again.body.refresh_token);
    }
    await awayFromStepEnd(8);
    await signInWithTotp(MIA, MIA.totp_secret, 1);
    await signInWithTotp(TOM, tomSecret, 1);
    // A refresh token not used since the change was made under the old secret alone: without
    // IDP_SECRET_PREVIOUS it is no longer genuine (the README says to keep the old secret for
    // IDP_REFRESH_TOKEN_IDLE_LIFETIME to lose none).
    expect((await refresh(base, WEB, untouched)).status).toBe(400);
  });
});
