/**
 * A webhook receiver on loopback (node:http): it keeps every request it gets (path, headers,
 * body) and answers as the test says: a status, a redirect, or never.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** What to answer a request with: a status (and headers), or `hang` (never answer). */
export type Answer = { status: number; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Changes the answer to the requests from now on. */
  answerWith(answer: Answer | ((request: ReceivedWebhook) => Answer)): void;
  close(): Promise<void>;
}

export async function startReceiver(answer: Answer | ((request: ReceivedWebhook) => Answer) = { status: 204 }): Promise<Receiver> {
  let respond = typeof answer === 'function' ? answer : () => answer;
  const received: ReceivedWebhook[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const request = { path: req.url ?? '', headers: req.headers, body, at: Date.now() };
      received.push(request);
      const reply = respond(request);
      if (reply === 'hang') return;
      res.writeHead(reply.status, reply.headers).end('a receiver answer that must never be shown');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    answerWith(next) {
      respond = typeof next === 'function' ? next : () => next;
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * Standard Webhooks verification as a receiver does it: the signed content, HMAC-SHA256 under
 * the base64-decoded secret after `whsec_`, compared with each `v1,` signature of the header.
 */
export function verifySignature(secret: string, request: Pick<ReceivedWebhook, 'headers' | 'body'>): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = `${String(request.headers['webhook-id'])}.${String(request.headers['webhook-timestamp'])}.${request.body}`;
  const expected = createHmac('sha256', key).update(signed).digest();
  return String(request.headers['webhook-signature'] ?? '').split(' ').some((sig) => {
    const [version, value = ''] = sig.split(',');
    const given = Buffer.from(value, 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
