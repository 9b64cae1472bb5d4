/**
 * Events delivered to a real receiver on loopback by two `idp serve` instances sharing one
 * PostgreSQL database: each event once (count at the receiver), signed per Standard Webhooks,
 * with payloads that hold no secret; the retry schedule (IDP_WEBHOOK_RETRY_SCALE), 410 Gone,
 * a redirect not followed, and 5 days of failures (scaled) that disable the endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_DELAYS_SECONDS } from '../../src/events/retry.ts';
import { runIdp, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, REDIS_URL, redisAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import { waitUntil } from '../helpers/waits.ts';
import { startReceiver, verifySignature, type Receiver } from '../helpers/webhook-receiver.ts';

const CLIENT = { client_id: 'svc', client_secret: 'svc-secret-0123456789abcdefghijklmnopqrstu' };
/** The retry schedule's 3.1 days in 13.6 s, and the 5 days of failures that disable an endpoint in 21.6 s. */
const SCALE = 0.00005;
const PASSWORD = 'a password that must never travel 42';

async function clientCredentials(server: RunningServer): Promise<string> {
  const res = await fetch(`${server.url}/connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${CLIENT.client_id}:${CLIENT.client_secret}`).toString('base64')}` },
    body: 'grant_type=client_credentials',
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

describe.runIf(postgresAvailable)('webhooks on PostgreSQL', () => {
  let db: TestDatabase;
  let env: Record<string, string>;
  const idp = async (...args: string[]) => {
    const result = await runIdp([...args, '--json'], env);
    return { ...result, json: result.stdout ? JSON.parse(result.stdout) as Record<string, unknown> : {} };
  };
  const add = async (url: string, ...events: string[]) => {
    const added = await idp('webhooks', 'add', '--url', url, ...events.flatMap((e) => ['--event', e]));
    expect(added.code, added.stdout + added.stderr).toBe(0);
    return added.json as { id: string; secret: string };
  };
  const attempts = async (id: string) => ((await idp('webhooks', 'deliveries', id)).json.attempts ?? []) as Array<Record<string, unknown>>;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, IDP_SECRET: Buffer.alloc(32, 7).toString('base64'), IDP_WEBHOOK_RETRY_SCALE: String(SCALE) };
    await seedWith({
      clients: [{ ...CLIENT, display_name: 'Service', grant_types: ['client_credentials'], scopes: [], redirect_uris: [] }],
    }, env);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('delivers each event once from two instances, signed, with no secret in it', async () => {
    const receiver = await startReceiver({ status: 204 });
    const servers: RunningServer[] = [];
    try {
      const endpoint = await add(`${receiver.url}/hook`, 'token_issued', 'admin_change');
      servers.push(await startServer(env), await startServer(env));
      const tokens: string[] = [];
      for (let i = 0; i < 20; i++) tokens.push(await clientCredentials(servers[i % 2] as RunningServer));
      const added = await idp('users', 'add', '--username', 'webhook-user', '--password', PASSWORD);
      expect(added.code, added.stderr).toBe(0);
      // 20 tokens, the user added, and the endpoint's own creation (an admin change too).
      await waitUntil('22 events at the receiver', () => receiver.received.length >= 22);
      await waitUntil('22 deliveries recorded', async () => (await runSql<{ n: number }>(db.url, "SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'succeeded'"))[0]?.n === 22);
      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(22);
      for (const request of receiver.received) {
        expect(verifySignature(endpoint.secret, request)).toBe(true);
        expect(verifySignature(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, request)).toBe(false);
        expect(request.headers['content-type']).toBe('application/json');
        expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
        for (const secret of [CLIENT.client_secret, PASSWORD, endpoint.secret, ...tokens]) expect(request.body).not.toContain(secret);
      }
      const bodies = receiver.received.map((r) => JSON.parse(r.body) as { type: string; timestamp: string; data: Record<string, unknown> });
      expect(bodies.filter((b) => b.type === 'token_issued')).toHaveLength(20);
      expect(bodies.find((b) => b.type === 'token_issued')?.data).toStrictEqual({ request_id: expect.any(String), source_address: '127.0.0.1', grant: 'client_credentials', client_id: 'svc' });
      const changes = bodies.filter((b) => b.type === 'admin_change').map((b) => b.data);
      expect(changes).toContainEqual(expect.objectContaining({ actor: 'cli', action: 'create', resource: 'user' }));
      expect(changes).toContainEqual(expect.objectContaining({ actor: 'cli', action: 'create', resource: 'webhook', resource_id: endpoint.id }));
      expect(new Date(bodies[0]?.timestamp ?? '').toISOString()).toBe(bodies[0]?.timestamp);
      const log = await attempts(endpoint.id);
      expect(log).toHaveLength(22);
      expect(log.every((a) => a.status === 204 && a.error === null && a.delivery_state === 'succeeded')).toBe(true);
      expect(JSON.stringify(log)).not.toContain('receiver answer');
      const metrics = await Promise.all(servers.map(async (s) => (await fetch(`${s.url}/metrics`)).text()));
      const succeeded = metrics.map((text) => Number(/^idp_webhook_deliveries_total\{result="succeeded"\} (\d+)$/m.exec(text)?.[1] ?? 0));
      expect(succeeded.reduce((a, b) => a + b, 0)).toBe(22);
      expect(metrics[0]).toMatch(/^idp_webhook_backlog 0$/m);
      expect(metrics[0]).toMatch(/^idp_webhook_oldest_pending_seconds 0$/m);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });

  it.runIf(redisAvailable)('refuses in production a URL that is not https or points to a refused address, a name resolving to one included', async () => {
    const production = { ...env, NODE_ENV: 'production', REDIS_URL, IDP_BASE_URL: 'https://id.example.com' };
    const urls = ['https://localhost/hook', 'https://127.0.0.1/hook', 'https://169.254.169.254/latest/meta-data', 'https://[::ffff:10.0.0.1]/hook', 'https://[fe80::1]/hook', 'https://100.64.0.1/hook', 'https://0.0.0.0/hook'];
    for (const url of urls) {
      const refused = await runIdp(['webhooks', 'add', '--url', url], production);
      expect(refused.code, url).toBe(1);
      expect(refused.stderr, url).toMatch(/^url must not point to /m);
    }
    const http = await runIdp(['webhooks', 'add', '--url', 'http://hooks.example.com/hook'], production);
    expect(http.code).toBe(1);
    expect(http.stderr).toContain('must be an https URL');
    const allowed = await runIdp(['webhooks', 'add', '--url', 'https://10.20.0.5/hook', '--json'], { ...production, IDP_WEBHOOK_ALLOWED_NETWORKS: '10.20.0.0/16' });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect((await idp('webhooks', 'remove', (JSON.parse(allowed.stdout) as { id: string }).id)).code).toBe(0);
  });

  describe('one instance and a receiver that fails', () => {
    let receiver: Receiver;
    let server: RunningServer;
    const endpointState = async (id: string) => (await runSql<{ enabled: boolean; disabled_reason: string | null }>(db.url, 'SELECT enabled, disabled_reason FROM webhook_endpoints WHERE id = $1', [id]))[0];
    const at = (path: string) => receiver.received.filter((r) => r.path === path);
    const test = async (id: string) => expect((await idp('webhooks', 'test', id)).code).toBe(0);

    beforeAll(async () => {
      receiver = await startReceiver((request) => {
        if (request.path === '/gone') return { status: 410 };
        if (request.path === '/redirect') return { status: 302, headers: { location: `${receiver.url}/target` } };
        if (request.path === '/fail') return { status: 500 };
        return { status: 200 };
      });
      server = await startServer({ ...env, LOG_LEVEL: 'info' });
    });
    afterAll(async () => {
      await server?.stop();
      await receiver?.close();
    });

    it('retries on the Standard Webhooks schedule (scaled), then gives up; 5 days of failures (scaled) disable the endpoint', async () => {
      const endpoint = await add(`${receiver.url}/fail`, 'key_rotated');
      await test(endpoint.id);
      await waitUntil('ten attempts', () => at('/fail').length >= 10, { detail: () => `${at('/fail').length} attempts\n${server.output()}` });
      await waitUntil('the delivery failed', async () => (await attempts(endpoint.id))[0]?.delivery_state === 'failed');
      const requests = at('/fail');
      expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
      const log = await attempts(endpoint.id);
      expect(log.map((a) => a.attempt)).toStrictEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
      expect(log.every((a) => a.status === 500 && a.error === 'status' && a.next_attempt_at === null)).toBe(true);
      // Each retry came no sooner than its delay of the schedule, scaled.
      const gaps = requests.slice(1).map((r, i) => r.at - (requests[i] as { at: number }).at);
      gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(Math.floor((RETRY_DELAYS_SECONDS[i] as number) * SCALE * 1000) - 2));
      expect((gaps[8] as number)).toBeGreaterThan(gaps[1] as number);
      // Failing for longer than 5 days (scaled: 21.6 s) disables it at the next failure.
      await waitUntil('the failing endpoint disabled', async () => {
        if ((await endpointState(endpoint.id))?.enabled === false) return true;
        await test(endpoint.id);
        return false;
      });
      expect(await endpointState(endpoint.id)).toStrictEqual({ enabled: false, disabled_reason: 'failing' });
      await waitUntil('the audit line', () => server.output().includes(`"event":"webhook_endpoint_disabled","endpoint_id":"${endpoint.id}","reason":"failing"`));
    });

    it('disables an endpoint that answers 410 Gone, without retrying', async () => {
      const endpoint = await add(`${receiver.url}/gone`, 'key_rotated');
      await test(endpoint.id);
      await waitUntil('the endpoint disabled', async () => (await endpointState(endpoint.id))?.enabled === false);
      expect(await endpointState(endpoint.id)).toStrictEqual({ enabled: false, disabled_reason: 'gone' });
      await waitUntil('the audit line', () => server.output().includes(`"event":"webhook_endpoint_disabled","endpoint_id":"${endpoint.id}","reason":"gone"`));
      const log = await attempts(endpoint.id);
      expect(log).toHaveLength(1);
      expect(log[0]).toMatchObject({ status: 410, error: 'status', delivery_state: 'failed', next_attempt_at: null });
      const shown = await idp('webhooks', 'show', endpoint.id);
      expect(shown.json).toMatchObject({ enabled: false, disabled_reason: 'gone' });
      // Enabled again by an administrator and the delivery redelivered, it receives it again.
      expect((await idp('webhooks', 'enable', endpoint.id)).code).toBe(0);
      expect((await endpointState(endpoint.id))).toStrictEqual({ enabled: true, disabled_reason: null });
      expect((await idp('webhooks', 'redeliver', endpoint.id, String(log[0]?.delivery_id))).code).toBe(0);
      await waitUntil('the redelivery', () => at('/gone').length === 2);
      expect(at('/gone')[1]?.headers['webhook-id']).toBe(at('/gone')[0]?.headers['webhook-id']);
      await waitUntil('disabled again', async () => (await endpointState(endpoint.id))?.enabled === false);
      expect((await idp('webhooks', 'redeliver', endpoint.id, '999999')).code).toBe(1);
    });

    it('does not follow a redirect: the attempt fails with its status', async () => {
      const endpoint = await add(`${receiver.url}/redirect`, 'key_rotated');
      await test(endpoint.id);
      await waitUntil('the first attempt recorded', async () => (await attempts(endpoint.id)).some((a) => a.duration_ms !== null));
      const [first] = (await attempts(endpoint.id)).filter((a) => a.attempt === 1);
      expect(first).toMatchObject({ status: 302, error: 'redirect', delivery_state: 'pending' });
      expect(at('/redirect').length).toBeGreaterThanOrEqual(1);
      expect(at('/target')).toHaveLength(0);
      const text = await runIdp(['webhooks', 'deliveries', endpoint.id], env);
      expect(text.stdout).toContain('redirect 302');
      expect(text.stdout).not.toContain('receiver answer');
      expect((await idp('webhooks', 'remove', endpoint.id)).code).toBe(0);
    });
  });
});
