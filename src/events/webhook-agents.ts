/**
 * Keep-alive connections for webhook requests, one pool per checked address. The host is still
 * resolved and checked at every attempt (webhook-request.ts), and the attempt takes the pool of
 * the address it permitted: a connection it reuses goes to that very address, and one it opens
 * too (the pool's own lookup answers that address without resolving anything again). So a TLS
 * handshake is paid per connection, not per event.
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';

/**
 * Requests in flight per endpoint on one instance at most (dispatcher.ts), and so connections
 * per pool: enough for a receiver that answers in 50 ms to take 1,000 events a second.
 */
export const REQUESTS_PER_ENDPOINT = 64;
/**
 * An idle connection is closed after this long, before a receiver closes it (Node.js servers
 * after 5 s; a `Keep-Alive: timeout=N` answer shortens it to N - 1 s).
 */
const IDLE_MS = 4000;
/** Pools kept at most; the least recently used one is closed beyond. */
const MAX_POOLS = 256;

const pools = new Map<string, http.Agent>();

/** A lookup that answers the one address it was made for, whatever the name. */
export function fixedLookup(address: string, family: number): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) return (callback as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address, family }]);
    callback(null, address, family);
  };
}

export interface CheckedTarget {
  url: URL;
  /** The address the policy permitted at this attempt's resolution. */
  address: string;
  family: number;
}

/** The pool of connections to `target.address` for the URL's scheme, host name and port. */
export function agentFor({ url, address, family }: CheckedTarget): http.Agent {
  const key = `${url.protocol}//${url.host}@${address}`;
  let agent = pools.get(key);
  if (agent) {
    // Most recently used last: the first one is the one to close when there are too many.
    pools.delete(key);
  } else {
    const options = { keepAlive: true, maxSockets: REQUESTS_PER_ENDPOINT, maxFreeSockets: REQUESTS_PER_ENDPOINT, timeout: IDLE_MS, lookup: fixedLookup(address, family) };
    agent = url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
    if (pools.size >= MAX_POOLS) {
      const [oldest, pool] = pools.entries().next().value as [string, http.Agent];
      pools.delete(oldest);
      pool.destroy();
    }
  }
  pools.set(key, agent);
  return agent;
}

/** Closes every pooled connection (a process that stops delivering). */
export function closeWebhookAgents(): void {
  for (const agent of pools.values()) agent.destroy();
  pools.clear();
}
