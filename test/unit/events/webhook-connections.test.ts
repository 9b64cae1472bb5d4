/**
 * Webhook requests keep their connection for the next attempt to the same checked address, and
 * still resolve and check the host at every attempt: an address refused since is not reached,
 * pooled connection or not. An answer's body is read and dropped, up to a bound past which the
 * connection is closed rather than read further.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AddressPolicy } from '../../../src/events/addresses.ts';
import { closeWebhookAgents } from '../../../src/events/webhook-agents.ts';
import { postWebhook } from '../../../src/events/webhook-request.ts';

const request = { body: '{"type":"webhook.test"}', headers: { 'webhook-id': 'evt_x' } };

async function receiver(answer: (res: http.ServerResponse) => void) {
  const seen = { connections: 0, requests: 0 };
  const server = http.createServer((req, res) => {
    seen.requests++;
    req.resume().on('end', () => answer(res));
  });
  server.on('connection', () => seen.connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { seen, server, url: `http://localhost:${(server.address() as AddressInfo).port}/hook` };
}

describe('webhook connections', () => {
  const servers: http.Server[] = [];
  afterEach(() => {
    closeWebhookAgents();
    for (const s of servers.splice(0)) s.close();
  });

  it('reuses the connection to an address that the resolution of each attempt permits, and reaches no address it refuses', async () => {
    const { seen, server, url } = await receiver((res) => res.writeHead(204).end());
    servers.push(server);
    let permitted = true;
    const lookedAt: string[] = [];
    const policy: AddressPolicy = {
      permits: (address) => (lookedAt.push(address), permitted && address === '127.0.0.1'),
      urlProblem: () => undefined,
    };
    for (let i = 0; i < 3; i++) expect(await postWebhook({ ...request, url }, policy)).toMatchObject({ status: 204, error: null });
    expect(seen).toStrictEqual({ connections: 1, requests: 3 });
    expect(lookedAt.filter((a) => a === '127.0.0.1')).toHaveLength(3);
    permitted = false;
    expect(await postWebhook({ ...request, url }, policy)).toMatchObject({ status: null, error: 'refused_address' });
    expect(seen.requests).toBe(3);
  });

  it('closes a connection whose answer is too long to drain, and answers its status all the same', async () => {
    const { seen, server, url } = await receiver((res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(1024 * 1024)));
    servers.push(server);
    const policy: AddressPolicy = { permits: (address) => address === '127.0.0.1', urlProblem: () => undefined };
    expect(await postWebhook({ ...request, url }, policy)).toMatchObject({ status: 200, error: null });
    expect(await postWebhook({ ...request, url }, policy)).toMatchObject({ status: 200, error: null });
    expect(seen).toStrictEqual({ connections: 2, requests: 2 });
  });
});
