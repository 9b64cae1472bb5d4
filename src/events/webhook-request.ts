/**
 * One webhook request. The host is resolved here, at every attempt, and the request goes to an
 * address that was checked: on a kept connection to it, or a new one (the pool's `lookup` answers
 * the checked address: there is no second resolution for a DNS answer to change in between). No
 * redirect is followed; only the answer's status is kept (its body is read to its end and
 * dropped, so that the connection serves again, up to a bound); the whole exchange ends after
 * the timeout.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { AddressPolicy } from './addresses.ts';
import { agentFor, fixedLookup, type CheckedTarget } from './webhook-agents.ts';

/** Any 2xx within this time is success (Standard Webhooks). */
export const WEBHOOK_TIMEOUT_MS = 15_000;

/**
 * Why an attempt failed without a 2xx: `status` (another status), `redirect` (a 3xx, not
 * followed), `timeout`, `refused_address` (the host is, or resolves only to, an address webhooks
 * may not reach), `dns` (the host does not resolve), `tls`, `connection`, `refused_url`.
 */
export type AttemptError = 'status' | 'redirect' | 'timeout' | 'refused_address' | 'dns' | 'tls' | 'connection' | 'refused_url';

export interface WebhookAnswer {
  status: number | null;
  error: AttemptError | null;
  durationMs: number;
}

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

const REFUSED_CODE = 'IDP_REFUSED_ADDRESS';
/** Of an answer's body, at most this much is read (and thrown away) to keep the connection; past it the connection is closed. */
const MAX_DRAINED_BYTES = 64 * 1024;

/** The host's addresses now, the first one the policy permits (one lookup per attempt). */
function resolveChecked(url: URL, policy: AddressPolicy): Promise<CheckedTarget> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return reject(error);
      const first = addresses.find((a) => policy.permits(a.address));
      if (!first) return reject(Object.assign(new Error(`${hostname} resolves to no address webhooks may reach`), { code: REFUSED_CODE }));
      resolve({ url, address: first.address, family: first.family });
    });
  });
}

function errorKind(error: NodeJS.ErrnoException): AttemptError {
  if (error.code === REFUSED_CODE) return 'refused_address';
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return 'dns';
  if (/CERT|SSL|TLS/.test(error.code ?? '') || /certificate|tls/i.test(error.message)) return 'tls';
  return 'connection';
}

/** Status and error of an answer: 2xx success, 3xx a redirect (not followed), else a status. */
function judged(status: number): AttemptError | null {
  return status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : 'status';
}

/** Sends the request and says how it ended; never throws, never keeps the answer's body. */
export function postWebhook(request: WebhookRequest, policy: AddressPolicy, timeoutMs = WEBHOOK_TIMEOUT_MS): Promise<WebhookAnswer> {
  const started = performance.now();
  const ended = (status: number | null, error: AttemptError | null): WebhookAnswer => ({ status, error, durationMs: Math.round(performance.now() - started) });
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return Promise.resolve(ended(null, 'refused_url'));
  }
  if (policy.urlProblem(url) !== undefined) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return Promise.resolve(ended(null, isIP(host) !== 0 ? 'refused_address' : 'refused_url'));
  }
  return new Promise((resolve) => {
    let settled = false;
    let current: http.ClientRequest | undefined;
    const settle = (answer: WebhookAnswer) => {
      if (settled) return;
      settled = true;
      resolve(answer);
    };
    // The whole exchange, the resolution and the answer's drained body included.
    const timer = setTimeout(() => {
      settle(ended(null, 'timeout'));
      current?.destroy();
    }, timeoutMs);
    const send = (target: CheckedTarget, retried: boolean) => {
      const client = url.protocol === 'https:' ? https : http;
      const req = client.request(url, {
        method: 'POST',
        headers: { ...request.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body) },
        agent: agentFor(target),
        lookup: fixedLookup(target.address, target.family),
      }, (res) => {
        const status = res.statusCode ?? 0;
        settle(ended(status, judged(status)));
        // Read to its end (and dropped) so that the connection can serve the next attempt.
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > MAX_DRAINED_BYTES) req.destroy();
        });
        res.on('end', () => clearTimeout(timer)).on('close', () => clearTimeout(timer)).on('error', () => undefined);
      });
      current = req;
      req.on('error', (error: NodeJS.ErrnoException) => {
        // A kept connection that the receiver closed meanwhile: once more on a new one.
        if (!settled && req.reusedSocket && !retried && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) return send(target, true);
        clearTimeout(timer);
        settle(ended(null, errorKind(error)));
      });
      req.end(request.body);
    };
    resolveChecked(url, policy).then((target) => {
      if (!settled) send(target, false);
    }, (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      settle(ended(null, errorKind(error)));
    });
  });
}
