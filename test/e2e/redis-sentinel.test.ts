/**
 * Two instances on a Redis Sentinel group started by the test (a master, a replica and three
 * sentinels), reached through the documented `redis+sentinel://host:port,…/master` URL. The
 * master is killed (SIGKILL) under steady traffic: the sentinels promote the replica, the
 * instances follow it, no client loses its refresh token chain and /readyz is back within
 * seconds. What fails meanwhile fails as 503 temporarily_unavailable, and only then.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisServersAvailable, startRedisSentinel, type RedisSentinelServers } from '../helpers/distributed.ts';
import type { RunningServer } from '../helpers/process.ts';
import { postgresAvailable } from '../helpers/services.ts';
import {
  ALICE, Balancer, SERVICE_SECRET, WEB_REDIRECT, WEB_SECRET, rawRequest, seedOf, serviceClient, sleep, startDeployment, unanswered, webClient,
  type Deployment, type RawResponse,
} from './operations-support.ts';
import { Browser, authorize, basic, token, type ClientCredentials } from './token-lifecycle-support.ts';

const WEB: ClientCredentials = { clientId: 'web', secret: WEB_SECRET };
const SERVICE: ClientCredentials = { clientId: 'svc', secret: SERVICE_SECRET };
const CHAINS = 6;
/** After the sentinels name the new master, every instance is ready again within this. */
const READY_AGAIN_MS = 5000;

describe.runIf(postgresAvailable && redisServersAvailable)('two instances on a Redis Sentinel group', () => {
  let sentinel: RedisSentinelServers;
  let lb: Balancer;
  let deployment: Deployment;
  let instances: RunningServer[];

  beforeAll(async () => {
    [sentinel, lb] = await Promise.all([startRedisSentinel(), Balancer.start()]);
    deployment = await startDeployment({
      seed: seedOf([webClient('web'), serviceClient('svc')], [ALICE]),
      // Its chains sign one user in at once: each password being checked holds one of the account's attempts.
      env: { IDP_BASE_URL: lb.url, REDIS_URL: sentinel.url, IDP_TRUST_PROXY: 'true', IDP_TOKEN_RATE_LIMIT: '100000', IDP_LOGIN_MAX_FAILURES: '50', IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: '50' },
      instances: 2,
    });
    instances = deployment.servers;
  });

  afterAll(async () => {
    await deployment?.stop();
    await lb?.close();
    await sentinel?.stop();
  });

  /** A token request straight to one instance, with the public Host (as the balancer passes it). */
  const tokenAt = (server: RunningServer, who: ClientCredentials, fields: Record<string, string>): Promise<RawResponse> =>
    rawRequest(server.port, {
      method: 'POST', path: '/connect/token', host: new URL(lb.url).host, timeoutMs: 10_000,
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(who.clientId, who.secret ?? '') },
      body: new URLSearchParams(fields).toString(),
    });

  async function refreshChain(): Promise<string> {
    lb.use(instances[0] as RunningServer);
    const { code, verifier } = await authorize(new Browser(), lb.url, 'web', WEB_REDIRECT, ALICE, 'openid offline_access');
    const res = await token(lb.url, WEB, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    expect(res.status, res.text).toBe(200);
    return String(res.body.refresh_token);
  }

  it('survives the master killed under traffic: no refresh chain broken, only 503 temporarily_unavailable meanwhile, /readyz back within seconds', async () => {
    const chains = await Promise.all(Array.from({ length: CHAINS }, () => refreshChain()));
    const broken: string[] = [];
    const unexpected: string[] = [];
    let served = 0;
    let unavailable = 0;
    let faulting = false;
    let stop = false;
    const note = (what: string, res: RawResponse, expected: number) => {
      if (res.status === expected) return void (served += 1);
      if (res.status === 503 && res.text.includes('temporarily_unavailable')) {
        unavailable += 1;
        if (!faulting) unexpected.push(`${what}: 503 outside the failover`);
        return;
      }
      unexpected.push(`${what}: ${res.status} ${res.text.slice(0, 200)}`);
    };
    // Each client follows its own chain, at alternating instances; a 503 keeps the token it holds.
    const follow = async (i: number) => {
      for (let n = 0; !stop; n++) {
        const server = instances[(i + n) % instances.length] as RunningServer;
        const res = await tokenAt(server, WEB, { grant_type: 'refresh_token', refresh_token: chains[i] ?? '' }).catch(unanswered);
        if (res.status === 200) chains[i] = String((JSON.parse(res.text) as { refresh_token: string }).refresh_token);
        else if (res.status !== 503) broken.push(`chain ${i}: ${res.status} ${res.text.slice(0, 200)}`);
        note(`refresh (chain ${i})`, res, 200);
        await sleep(20);
      }
    };
    // The code exchange needs Redis on every request (the code is looked up there).
    const probe = async (kind: 'code' | 'client') => {
      for (let n = 0; !stop; n++) {
        const server = instances[n % instances.length] as RunningServer;
        const res = await (kind === 'code'
          ? tokenAt(server, WEB, { grant_type: 'authorization_code', code: randomBytes(32).toString('base64url'), redirect_uri: WEB_REDIRECT, code_verifier: 'v'.repeat(43) })
          : tokenAt(server, SERVICE, { grant_type: 'client_credentials', scope: 'orders.read' })).catch(unanswered);
        note(kind === 'code' ? 'code exchange' : 'client credentials', res, kind === 'code' ? 400 : 200);
        await sleep(20);
      }
    };
    const traffic = Promise.all([...chains.map((_, i) => follow(i)), probe('code'), probe('client')]);
    const master = await sentinel.currentMaster();
    let failoverMs: number;
    let readyMs: number;
    try {
      await sleep(500);
      faulting = true;
      const failover = await sentinel.failover();
      failoverMs = failover.ms;
      const promoted = Date.now();
      for (const server of instances) {
        for (;;) {
          const ready = await fetch(`${server.url}/readyz`).catch(() => undefined);
          if (ready?.status === 200) break;
          expect(Date.now() - promoted, `instance ${server.port} ready again after the failover`).toBeLessThan(READY_AGAIN_MS);
          await sleep(100);
        }
      }
      readyMs = Date.now() - promoted;
      await failover.rejoined;
      // A moment of normal service after the fault, where nothing may fail.
      await sleep(300);
      faulting = false;
      await sleep(700);
    } finally {
      // Also when the failover fails: no request may still run when the instances are stopped.
      stop = true;
      await traffic;
    }

    expect(await sentinel.currentMaster()).not.toBe(master);
    expect(failoverMs).toBeLessThan(10_000);
    expect(broken, 'refresh chains broken').toStrictEqual([]);
    expect(unexpected).toStrictEqual([]);
    expect(served).toBeGreaterThan(CHAINS * 5);
    // Every client still holds a working refresh token, at either instance.
    for (const [i, held] of chains.entries()) {
      const res = await tokenAt(instances[i % instances.length] as RunningServer, WEB, { grant_type: 'refresh_token', refresh_token: held });
      expect(res.status, res.text).toBe(200);
    }
    // And a whole sign-in goes through on the new master.
    await refreshChain();
    console.info(`sentinel failover: new master named ${failoverMs} ms after the kill, every instance ready ${readyMs} ms later; ${served} answers, ${unavailable} × 503 during it`);
  });
});
