/**
 * Webhooks on the embedded database (one instance, PGlite), managed with `idp webhooks` beside
 * the running server: a receiver that never answers is given up on after 15 seconds (the
 * attempt is recorded as a timeout, and retried later), one that answers gets the test event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { waitUntil } from '../helpers/waits.ts';
import { startReceiver, verifySignature, type Receiver } from '../helpers/webhook-receiver.ts';

describe('webhooks on the embedded database', () => {
  const dir = tempDir('idp-webhooks-');
  const env = { IDP_DATA_DIR: dir.path };
  let server: RunningServer;
  let receiver: Receiver;
  const idp = async (...args: string[]) => {
    const result = await runIdp([...args, '--json'], env);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const attempts = async (id: string) => (await idp('webhooks', 'deliveries', id)).attempts as Array<Record<string, unknown>>;

  beforeAll(async () => {
    receiver = await startReceiver((request) => (request.path === '/hang' ? 'hang' : { status: 200 }));
    server = await startServer(env);
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    dir.remove();
  });

  it('records an attempt to a receiver that never answers as a timeout after 15 s, and retries it', async () => {
    const { id } = await idp('webhooks', 'add', '--url', `${receiver.url}/hang`, '--event', 'key_rotated') as { id: string };
    const { event_id: eventId } = await idp('webhooks', 'test', id) as { event_id: string };
    await waitUntil('the attempt ended', async () => (await attempts(id)).some((a) => a.duration_ms !== null));
    const [attempt] = await attempts(id);
    expect(attempt).toMatchObject({ event_id: eventId, event_type: 'webhook.test', attempt: 1, status: null, error: 'timeout', delivery_state: 'pending' });
    expect(attempt?.duration_ms).toBeGreaterThanOrEqual(15_000);
    expect(Date.parse(String(attempt?.next_attempt_at))).toBeGreaterThan(Date.parse(String(attempt?.started_at)));
    expect(receiver.received.filter((r) => r.path === '/hang')).toHaveLength(1);
  });

  it('delivers the test event to a receiver that answers, signed with the secret shown once', async () => {
    const { id, secret } = await idp('webhooks', 'add', '--url', `${receiver.url}/ok`) as { id: string; secret: string };
    await idp('webhooks', 'test', id);
    await waitUntil('the test event', () => receiver.received.some((r) => r.path === '/ok' && r.body.includes('webhook.test')));
    const request = receiver.received.find((r) => r.path === '/ok' && r.body.includes('webhook.test'));
    expect(verifySignature(secret, request as NonNullable<typeof request>)).toBe(true);
    expect(JSON.parse(request?.body ?? '{}')).toMatchObject({ type: 'webhook.test', data: { endpoint_id: id } });
    const listed = await idp('webhooks', 'list');
    expect(JSON.stringify(listed)).not.toContain('whsec_');

    // A new secret: for 24 hours each delivery is signed with both, the new one first.
    const rotated = await idp('webhooks', 'rotate-secret', id) as { secret: string; previous_secret_expires_at: string };
    expect(rotated.secret).not.toBe(secret);
    expect(Date.parse(rotated.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    const { event_id: second } = await idp('webhooks', 'test', id) as { event_id: string };
    await waitUntil('the second test event', () => receiver.received.some((r) => r.headers['webhook-id'] === second));
    const signed = receiver.received.find((r) => r.headers['webhook-id'] === second) as NonNullable<typeof request>;
    expect(String(signed.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verifySignature(rotated.secret, signed)).toBe(true);
    expect(verifySignature(secret, signed)).toBe(true);
  });
});
