/**
 * The service answers for its own address only: a request for another Host (or, behind a
 * trusted proxy, X-Forwarded-Host) is refused, so no page or redirect is ever made for a host an
 * attacker chose. Loopback names are one host, for development.
 */
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { OAuthError } from '../../errors.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** host[:port] in lower case, without the scheme's default port. */
function normalise(host: string, scheme: string): string {
  const lower = host.trim().toLowerCase();
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(lower);
  if (!match) return lower;
  const [, name = '', port] = match;
  const defaultPort = scheme === 'https:' ? '443' : '80';
  const canonicalName = LOOPBACK.has(name) ? 'loopback' : name;
  return port === undefined || port === defaultPort ? canonicalName : `${canonicalName}:${port}`;
}

export function createHostCheck(baseUrl: string): (host: string | undefined) => boolean {
  const url = new URL(baseUrl);
  const expected = normalise(url.host, url.protocol);
  // Nearly every request names the same host: the last answer is kept (one entry, so a caller
  // varying the Host header costs no memory).
  let lastHost: string | undefined;
  let lastAnswer = false;
  return (host) => {
    if (host === undefined) return false;
    if (host !== lastHost) {
      lastAnswer = normalise(host, url.protocol) === expected;
      lastHost = host;
    }
    return lastAnswer;
  };
}

/**
 * The public port's refusal of a request naming another host, or undefined. Probes of load
 * balancers call by address; everything else must name the service's host.
 */
export function foreignHostCheck(config: Pick<Config, 'baseUrl'>, basePath: string): (request: FastifyRequest) => OAuthError | undefined {
  const isOwnHost = createHostCheck(config.baseUrl);
  const probes = new Set(['/healthz', '/readyz', '/metrics'].map((p) => `${basePath}${p}`));
  // Says what was expected and which settings decide it: the usual cause is a proxy that
  // rewrites Host, or a base URL left at its default.
  const refusal = `This request names another host than this service's address: it answers for ${new URL(config.baseUrl).host} (IDP_BASE_URL). `
    + 'Behind a proxy, pass the Host header on, or set IDP_TRUST_PROXY so that X-Forwarded-Host counts.';
  return (request) => {
    if (isOwnHost(request.host) || probes.has(request.url.split('?')[0] ?? '')) return undefined;
    return new OAuthError('invalid_request', refusal, { redirectable: false, detail: `host ${request.host}` });
  };
}
