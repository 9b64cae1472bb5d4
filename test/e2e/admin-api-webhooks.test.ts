/**
 * A webhook endpoint made through the administration API of a spawned `idp serve` (PostgreSQL,
 * Redis) for a real receiver on loopback: its `webhook.test` arrives signed with the secret of
 * the creating answer, then with both secrets after a rotation; the delivery log shows the
 * receiver's status, never its answer; a redelivery arrives with the same webhook-id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/services.ts';
import { waitUntil } from '../helpers/waits.ts';
import { startReceiver, verifySignature, type Receiver } from '../helpers/webhook-receiver.ts';
import { HOOKS_SECRET, call, startAdminServers, tokenFor, type ServersSetup } from './admin-api-support.ts';

describe.runIf(postgresAvailable)('administration API: a webhook endpoint against a real receiver', () => {
  let s: ServersSetup;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver({ status: 204 });
    s = await startAdminServers(1);
  });
  afterAll(async () => {
    await s?.stop();
    await receiver?.close();
  });

  it('delivers a signed webhook.test, signs with both secrets after a rotation, logs the attempt and redelivers it', async () => {
    const token = await tokenFor(s.base, 'hooks', HOOKS_SECRET, 'admin_console_webhooks');
    const made = await call(`${s.api}/webhooks`, 'POST', { token, body: { url: `${receiver.url}/hook`, event_types: ['sign_in'] } });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    const sent = await call(`${s.api}/webhooks/${id}/test`, 'POST', { token });
    expect(sent.status).toBe(202);
    const arrived = () => receiver.received.filter((r) => r.headers['webhook-id'] === sent.body.event_id);
    await waitUntil('the test event arrives', () => arrived().length === 1);
    const first = arrived()[0]!;
    expect(JSON.parse(first.body)).toMatchObject({ type: 'webhook.test', data: { endpoint_id: id } });
    expect(verifySignature(made.body.secret, first)).toBe(true);

    const rotated = await call(`${s.api}/webhooks/${id}/secret`, 'POST', { token });
    const second = await call(`${s.api}/webhooks/${id}/test`, 'POST', { token });
    await waitUntil('the second test event arrives', () => receiver.received.some((r) => r.headers['webhook-id'] === second.body.event_id));
    const signedTwice = receiver.received.find((r) => r.headers['webhook-id'] === second.body.event_id)!;
    expect(verifySignature(rotated.body.secret, signedTwice)).toBe(true);
    expect(verifySignature(made.body.secret, signedTwice)).toBe(true);

    const log = await call(`${s.api}/webhooks/${id}/deliveries`, 'GET', { token });
    const attempt = (log.body.items as Array<Record<string, unknown>>).find((a) => a.event_id === sent.body.event_id);
    expect(attempt).toMatchObject({ event_type: 'webhook.test', attempt: 1, status: 204, error: null, delivery_state: 'succeeded', next_attempt_at: null });
    expect(JSON.stringify(log.body)).not.toContain('a receiver answer');
    const again = await call(`${s.api}/webhooks/${id}/deliveries/${String(attempt?.delivery_id)}/redeliver`, 'POST', { token });
    expect(again.status).toBe(202);
    await waitUntil('the redelivery arrives with the same webhook-id', () => arrived().length === 2);
    expect(verifySignature(rotated.body.secret, arrived()[1]!)).toBe(true);
  });

  it('sends a webhook.test to a disabled endpoint (to check a receiver before enabling it), and nothing else while disabled', async () => {
    const token = await tokenFor(s.base, 'hooks', HOOKS_SECRET, 'admin_console_webhooks');
    const made = await call(`${s.api}/webhooks`, 'POST', { token, body: { url: `${receiver.url}/disabled`, enabled: false } });
    expect(made.body.enabled).toBe(false);
    const sent = await call(`${s.api}/webhooks/${made.body.id}/test`, 'POST', { token });
    expect(sent.status).toBe(202);
    await waitUntil('the test event arrives at the disabled endpoint', () => receiver.received.some((r) => r.headers['webhook-id'] === sent.body.event_id));
    const arrived = receiver.received.filter((r) => r.path === '/disabled');
    expect(arrived.map((r) => JSON.parse(r.body).type)).toStrictEqual(['webhook.test']);
    expect(verifySignature(made.body.secret, arrived[0]!)).toBe(true);
  });
});
