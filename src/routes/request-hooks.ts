/**
 * The two hooks every request of the public port passes, on arrival and on answer. They run on
 * every request, so they take callbacks and make no promise.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OAuthError } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import { setResponseHeaders } from './shared/security-headers.ts';

/**
 * The first hook of all: it counts the request in flight ('close' fires on every response, also
 * one whose client went away before it was sent, so every request counted is also uncounted),
 * sets the headers every response carries (before anything can fail: Fastify keeps them on its
 * error responses), and refuses a foreign Host. A request the router refuses before any hook
 * runs (frameworkErrors) gets the same headers there.
 */
export function prepareEveryRequest(app: FastifyInstance, options: {
  metrics: Metrics;
  headers: Readonly<Record<string, string>>;
  refuseForeignHost: (request: FastifyRequest) => OAuthError | undefined;
}): void {
  const { metrics, headers, refuseForeignHost } = options;
  const answered = () => metrics.inFlight.dec();
  app.addHook('onRequest', (request, reply, done) => {
    metrics.inFlight.inc();
    reply.raw.on('close', answered);
    setResponseHeaders(request, reply, headers);
    done(refuseForeignHost(request));
  });
}

/**
 * One log line per request: route, status and the source address (as IDP_TRUST_PROXY resolves
 * it), never the query string or the body. Health probes are logged at `debug`: load balancers
 * ask every few seconds, and their lines were half of the log. The metrics count every request.
 */
export function addRequestLog(app: FastifyInstance, metrics: Metrics, basePath: string): void {
  const probes = new Set(['/healthz', '/readyz'].map((p) => `${basePath}${p}`));
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unknown';
    const status = reply.statusCode;
    const elapsed = reply.elapsedTime;
    const line = { method: request.method, route, status, ms: Math.round(elapsed * 10) / 10, source_address: request.ip };
    if (probes.has(route)) request.log.debug(line, 'request');
    else request.log.info(line, 'request');
    metrics.requests.record(route, request.method, status, elapsed / 1000);
    if (status === 429) metrics.rateLimited.inc(rateLimitKind(route));
    done();
  });
}

/** Which budget a 429 of this route is of (idp_rate_limited_total's `kind`). */
function rateLimitKind(route: string): string {
  if (route.endsWith('/connect/authorize')) return 'authorize';
  return route.includes('/admin/v1') ? 'admin_api' : 'token';
}
