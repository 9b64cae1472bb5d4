/**
 * Two things that need a server configured for them:
 * - refresh token theft: with IDP_REFRESH_TOKEN_REUSE_GRACE=1, a rotated-out refresh token
 *   presented after the window revokes the whole family and the access tokens issued from it
 *   (seen through introspection and userinfo), and writes the audit line
 *   `refresh_token_reuse_detected` on the server's stdout;
 * - the token endpoint's rate limit (IDP_TOKEN_RATE_LIMIT=3) per client and per source address,
 *   shared by two instances through Redis: 429 slow_down with Retry-After.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable, redisAvailable } from '../helpers/services.ts';
import {
  ALICE, BOB, SPA, WEB, expectActive, expectInactive, expectOAuthError, expectUserinfoAccepted, expectUserinfoRefused,
  refresh, seedFor, signInTokens, sleep, startCluster, token, type Cluster, type ClientCredentials, type Tokens,
} from './token-lifecycle-support.ts';

describe.runIf(postgresAvailable)('refresh token reuse after the grace window (IDP_REFRESH_TOKEN_REUSE_GRACE=1)', () => {
  let cluster: Cluster;
  let base: string;
  /** Only what the server writes to stdout, from the start on. */
  let stdout = '';

  beforeAll(async () => {
    cluster = await startCluster({ env: { IDP_REFRESH_TOKEN_REUSE_GRACE: '1' } });
    base = cluster.base;
    cluster.servers[0]?.child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  const auditLines = (event: string) =>
    stdout.split('\n').flatMap((line) => {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        return parsed.event === event ? [parsed] : [];
      } catch {
        return [];
      }
    });

  async function refreshed(tokens: Tokens): Promise<Tokens> {
    const res = await refresh(base, WEB, tokens.refresh_token);
    expect(res.status, res.text).toBe(200);
    return res.body as unknown as Tokens;
  }

  it('revokes the whole family and its access tokens, refuses the newest token, and writes the audit line', async () => {
    const first = await signInTokens(cluster, ALICE, WEB);
    const second = await refreshed(first);
    const third = await refreshed(second);
    // Alice's other authorization at the same client, and her authorization at another client.
    const otherFamily = await signInTokens(cluster, ALICE, WEB);
    const spa = await signInTokens(cluster, ALICE, SPA);
    for (const t of [first, second, third]) await expectActive(base, WEB, t.access_token);
    await expectActive(base, WEB, third.refresh_token);
    expect(auditLines('refresh_token_reuse_detected')).toHaveLength(0);

    await sleep(1600);
    const reusedAt = Date.now();
    // `second` was rotated out when `third` was issued, more than a second ago: theft.
    expectOAuthError(await refresh(base, WEB, second.refresh_token), 400, 'invalid_grant');

    // The newest refresh token dies with its family; so do the family's access tokens.
    expectOAuthError(await refresh(base, WEB, third.refresh_token), 400, 'invalid_grant');
    await expectInactive(base, WEB, third.refresh_token, 'refresh_token');
    for (const t of [first, second, third]) {
      await expectInactive(base, WEB, t.access_token);
      await expectUserinfoRefused(base, t.access_token);
    }
    // Nothing else: another family of the same user and client, and another client, live on.
    await expectActive(base, WEB, otherFamily.access_token);
    await expectUserinfoAccepted(base, otherFamily.access_token);
    expect((await refresh(base, WEB, otherFamily.refresh_token)).status).toBe(200);
    expect((await refresh(base, SPA, spa.refresh_token)).status).toBe(200);

    // One audit line on stdout, naming the client, when the token was rotated and when it came back.
    const lines = auditLines('refresh_token_reuse_detected');
    expect(lines, stdout.slice(-2000)).toHaveLength(1);
    const line = lines[0] ?? {};
    expect(line.client_id).toBe('web');
    const rotatedAt = Date.parse(String(line.rotated_at));
    const reused = Date.parse(String(line.reused_at));
    expect(Number.isNaN(rotatedAt)).toBe(false);
    expect(Number.isNaN(reused)).toBe(false);
    expect(reused - rotatedAt).toBeGreaterThan(1000);
    expect(Math.abs(reused - reusedAt)).toBeLessThan(5000);
    // README, Production: no token value in any log line.
    for (const t of [first, second, third]) {
      expect(stdout.includes(t.refresh_token), 'a refresh token in the log').toBe(false);
      expect(stdout.includes(t.access_token), 'an access token in the log').toBe(false);
    }
  });

  it('treats the very first token presented after the window as theft too', async () => {
    const first = await signInTokens(cluster, BOB, WEB);
    const second = await refreshed(first);
    await sleep(1600);
    expectOAuthError(await refresh(base, WEB, first.refresh_token), 400, 'invalid_grant');
    expectOAuthError(await refresh(base, WEB, second.refresh_token), 400, 'invalid_grant');
    await expectInactive(base, WEB, second.access_token);
    await expectUserinfoRefused(base, second.access_token);
    await expectUserinfoRefused(base, first.access_token);
    expect(auditLines('refresh_token_reuse_detected').length).toBeGreaterThanOrEqual(2);
  });
});

/** Waits, when needed, so that at least `seconds` remain in the current one-minute window. */
async function roomInWindow(seconds = 12): Promise<void> {
  const intoMinute = (Date.now() / 1000) % 60;
  if (60 - intoMinute < seconds) await sleep((60 - intoMinute) * 1000 + 300);
}

describe.runIf(postgresAvailable && redisAvailable)('the token endpoint rate limit (IDP_TOKEN_RATE_LIMIT=3) on two instances', () => {
  let cluster: Cluster;
  let a: string;
  let b: string;
  // Fresh client ids and addresses: counters in the shared Redis outlive a run for up to a minute.
  const run = randomBytes(3).toString('hex');
  const secret = `svc-secret-${run}-0123456789abcdefghijklmnop`;
  const svc = (n: number): ClientCredentials => ({ clientId: `svc${n}-${run}`, secret });
  let addressCounter = 0;
  const octet = () => Math.floor(Math.random() * 250) + 1;
  const prefix = `10.${octet()}.${octet()}`;
  const freshAddress = () => `${prefix}.${++addressCounter}`;
  const grant = (base: string, who: ClientCredentials, address: string) =>
    token(base, who, { grant_type: 'client_credentials', scope: 'orders.read' }, { 'x-forwarded-for': address });

  beforeAll(async () => {
    const seed = seedFor();
    seed.clients.push(...[1, 2, 3, 4, 5].map((n) => ({
      client_id: `svc${n}-${run}`, client_secret: secret, display_name: `Service ${n}`,
      grant_types: ['client_credentials'], scopes: ['orders.read'],
    }) as (typeof seed.clients)[number]));
    cluster = await startCluster({ instances: 2, redis: true, seed, env: { IDP_TOKEN_RATE_LIMIT: '3', IDP_TRUST_PROXY: 'true' } });
    a = cluster.servers[0]?.url ?? '';
    b = cluster.servers[1]?.url ?? '';
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  function expectSlowDown(res: Awaited<ReturnType<typeof grant>>): void {
    expectOAuthError(res, 429, 'slow_down');
    const retryAfter = res.headers.get('retry-after');
    expect(retryAfter, 'Retry-After header').toMatch(/^\d+$/);
    const seconds = Number(retryAfter);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    // Fixed one-minute windows: the budget comes back at the next full minute.
    const untilNextMinute = 60 - ((Date.now() / 1000) % 60);
    expect(Math.abs(seconds - untilNextMinute)).toBeLessThanOrEqual(2);
  }

  it('gives the 4th request of one client within the minute 429 slow_down with Retry-After, whatever its address', async () => {
    await roomInWindow();
    for (let i = 0; i < 3; i++) {
      const res = await grant(a, svc(1), freshAddress());
      expect(res.status, res.text).toBe(200);
    }
    expectSlowDown(await grant(a, svc(1), freshAddress()));
    // Another client is not affected.
    expect((await grant(a, svc(2), freshAddress())).status).toBe(200);
  });

  it('shares one budget between the instances', async () => {
    await roomInWindow();
    const who = svc(3);
    expect((await grant(a, who, freshAddress())).status).toBe(200);
    expect((await grant(b, who, freshAddress())).status).toBe(200);
    expect((await grant(a, who, freshAddress())).status).toBe(200);
    expectSlowDown(await grant(b, who, freshAddress()));
    expectSlowDown(await grant(a, who, freshAddress()));
  });

  it('limits one source address over any clients, counting refused requests too', async () => {
    await roomInWindow();
    const address = freshAddress();
    expect((await grant(a, svc(4), address)).status).toBe(200);
    const stranger = await grant(b, { clientId: `nobody-${run}`, secret }, address);
    expect(stranger.status, stranger.text).toBe(401);
    expect((await grant(a, svc(5), address)).status).toBe(200);
    expectSlowDown(await grant(b, svc(5), address));
    // svc5 has spent one request: from another address it is served.
    expect((await grant(a, svc(5), freshAddress())).status).toBe(200);
  });
});
