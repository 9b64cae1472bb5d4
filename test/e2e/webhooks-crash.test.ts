/**
 * Nothing lost when an instance dies: an instance killed (SIGKILL) while its attempt is in
 * flight leaves the delivery to another instance, which makes the next attempt once the first
 * one's lease has run out; the lost attempt is recorded as `interrupted`.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import { waitUntil } from '../helpers/waits.ts';
import { startReceiver, verifySignature } from '../helpers/webhook-receiver.ts';

const CLIENT = { client_id: 'svc', client_secret: 'svc-secret-0123456789abcdefghijklmnopqrstu' };
const AUTOMATION = { client_id: 'automation', client_secret: 'automation-secret-0123456789abcdefghijkl' };

/** POSTs JSON and calls `kill` as soon as the answer's head is read, before anything else runs; resolves with its status and request id. */
function answeredThenKilled(url: string, token: string, body: string, kill: () => void): Promise<{ status: number; requestId: string | undefined }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } }, (response) => {
      kill();
      response.resume();
      const requestId = response.headers['x-request-id'];
      resolve({ status: response.statusCode ?? 0, requestId: typeof requestId === 'string' ? requestId : undefined });
    });
    request.on('error', reject);
    request.end(body);
  });
}

const basic = ({ client_id, client_secret }: typeof CLIENT) => `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}`;

describe.runIf(postgresAvailable)('webhooks when an instance dies', () => {
  let db: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, IDP_SECRET: Buffer.alloc(32, 9).toString('base64') };
    await seedWith({ clients: [
      { ...CLIENT, display_name: 'Service', grant_types: ['client_credentials'], scopes: [], redirect_uris: [] },
      { ...AUTOMATION, grant_types: ['client_credentials'], scopes: ['admin_api'] },
    ] }, env);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('delivers from another instance an event whose instance was killed mid-delivery', async () => {
    // The first request is never answered: the instance dies while it waits.
    const receiver = await startReceiver((request) => (receiver.received.indexOf(request) === 0 ? 'hang' : { status: 204 }));
    const servers: RunningServer[] = [];
    try {
      const added = await runIdp(['webhooks', 'add', '--url', `${receiver.url}/hook`, '--event', 'token_issued', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      const { id, secret } = JSON.parse(added.stdout) as { id: string; secret: string };
      const first = await startServer(env);
      servers.push(first);
      const res = await fetch(`${first.url}/connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT) },
        body: 'grant_type=client_credentials',
      });
      expect(res.status).toBe(200);
      await waitUntil('the first attempt in flight', () => receiver.received.length === 1);
      first.child.kill('SIGKILL');
      await waitUntil('the first instance gone', () => first.child.signalCode === 'SIGKILL');
      servers.push(await startServer(env));
      await waitUntil('the event delivered by the second instance', () => receiver.received.length >= 2);
      const [lost, delivered] = receiver.received;
      expect(delivered?.headers['webhook-id']).toBe(lost?.headers['webhook-id']);
      expect(verifySignature(secret, delivered as NonNullable<typeof delivered>)).toBe(true);
      expect(JSON.parse(delivered?.body ?? '{}')).toMatchObject({ type: 'token_issued', data: { client_id: 'svc' } });
      await waitUntil('the delivery recorded', async () => (await runSql<{ state: string }>(db.url, 'SELECT state FROM webhook_deliveries'))[0]?.state === 'succeeded');
      const log = JSON.parse((await runIdp(['webhooks', 'deliveries', id, '--json'], env)).stdout) as { attempts: Array<Record<string, unknown>> };
      expect(log.attempts.map((a) => [a.attempt, a.status, a.error])).toStrictEqual([[2, 204, null], [1, null, 'interrupted']]);
      expect(receiver.received).toHaveLength(2);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });

  it('delivers the admin_change of an API change answered 2xx by an instance killed right after answering', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    const servers: RunningServer[] = [];
    try {
      const added = await runIdp(['webhooks', 'add', '--url', `${receiver.url}/changes`, '--event', 'admin_change', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      const first = await startServer(env);
      servers.push(first);
      const token = await fetch(`${first.url}/connect/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(AUTOMATION) }, body: 'grant_type=client_credentials&scope=admin_api',
      });
      const { access_token: accessToken } = (await token.json()) as { access_token: string };
      // Killed the moment its answer's status line arrives: an event gathered to be written
      // after the change (20 ms later) is lost here; one written in the change's transaction is not.
      const { status, requestId } = await answeredThenKilled(`${first.url}/admin/v1/api-scopes`, accessToken, JSON.stringify({ name: 'crash.proof' }), () => first.child.kill('SIGKILL'));
      expect(status).toBe(201);
      expect(requestId).toMatch(/^[\w.-]+$/);
      await waitUntil('the first instance gone', () => first.child.signalCode === 'SIGKILL');
      servers.push(await startServer(env));
      const change = await waitUntil('the admin_change delivered', () => receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
        .find((event) => event.type === 'admin_change' && event.data.resource_id === 'crash.proof'));
      // Who and from where, as the request's log line says it: its request id, its address, the caller.
      expect(change.data).toStrictEqual({
        request_id: requestId, source_address: '127.0.0.1', client_id: 'automation', actor: 'api', action: 'create', resource: 'api_scope', resource_id: 'crash.proof', fields: [],
      });
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });
});
