/**
 * Events delivered to a real receiver on loopback by two `idp serve` instances sharing one
 * PostgreSQL database: each event once (count at the receiver), signed per Standard Webhooks,
 * with payloads that hold no secret; the retry schedule (IDP_WEBHOOK_RETRY_SCALE), 410 Gone,
 * a redirect not followed, and 5 days of failures (scaled) that disable the endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import { waitUntil } from '../helpers/waits.ts';
import { startReceiver, verifySignature } from '../helpers/webhook-receiver.ts';

const CLIENT = { client_id: 'svc', client_secret: 'svc-secret-0123456789abcdefghijklmnopqrstu' };
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
    env = { DATABASE_URL: db.url, IDP_SECRET: Buffer.alloc(32, 7).toString('base64'), IDP_WEBHOOK_RETRY_SCALE: '0.00002' };
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
      const delivered = await runSql<{ n: number }>(db.url, "SELECT count(*)::int AS n FROM webhook_deliveries WHERE state = 'succeeded'");
      expect(delivered[0]?.n).toBe(22);
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
      expect(bodies.find((b) => b.type === 'token_issued')?.data).toStrictEqual({ grant: 'client_credentials', client_id: 'svc' });
      const changes = bodies.filter((b) => b.type === 'admin_change').map((b) => b.data);
      expect(changes).toContainEqual(expect.objectContaining({ actor: 'cli', action: 'create', resource: 'user' }));
      expect(changes).toContainEqual(expect.objectContaining({ actor: 'cli', action: 'create', resource: 'webhook', resource_id: endpoint.id }));
      expect(new Date(bodies[0]?.timestamp ?? '').toISOString()).toBe(bodies[0]?.timestamp);
      const log = await attempts(endpoint.id);
      expect(log).toHaveLength(22);
      expect(log.every((a) => a.status === 204 && a.error === null && a.delivery_state === 'succeeded')).toBe(true);
      expect(JSON.stringify(log)).not.toContain('receiver answer');
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });
});
