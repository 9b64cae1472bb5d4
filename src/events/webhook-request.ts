/**
 * One webhook request. The host is resolved here, at every attempt, and the request connects to
 * an address that was checked (the request's own `lookup`: there is no second resolution for a
 * DNS answer to change in between). No redirect is followed; the answer's body is not read (only
 * its status is kept, never shown); the whole exchange ends after the timeout.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { AddressPolicy } from './addresses.ts';

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

/** A lookup that answers only with addresses the policy permits. */
function checkedLookup(policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const permitted = addresses.filter((a) => policy.permits(a.address));
      const first = permitted[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} resolves to no address webhooks may reach`), { code: REFUSED_CODE }), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, permitted);
      callback(null, first.address, first.family);
    });
  };
}

function errorKind(error: NodeJS.ErrnoException & { timeout?: boolean }): AttemptError {
  if (error.timeout) return 'timeout';
  if (error.code === REFUSED_CODE) return 'refused_address';
  if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return 'dns';
  if (/CERT|SSL|TLS/.test(error.code ?? '') || /certificate|tls/i.test(error.message)) return 'tls';
  return 'connection';
}

/** Sends the request and says how it ended; never throws, never reads more than the status line and headers. */
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
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (answer: WebhookAnswer) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(answer);
    };
    const req = client.request(url, {
      method: 'POST',
      headers: { ...request.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body) },
      lookup: checkedLookup(policy),
      agent: false,
    }, (res) => {
      const status = res.statusCode ?? 0;
      res.destroy();
      settle(ended(status, status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? 'redirect' : 'status'));
    });
    const timer = setTimeout(() => settle(ended(null, 'timeout')), timeoutMs);
    req.on('error', (error) => settle(ended(null, errorKind(error))));
    req.end(request.body);
  });
}
