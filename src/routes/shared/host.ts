/**
 * Which Host a request may name. The public port answers for its own address only: a request for
 * another Host (or, behind a trusted proxy, X-Forwarded-Host) is refused, so no page or redirect
 * is ever made for a host an attacker chose. Loopback names are one host, for development. The
 * management port's rule is createManagementHostCheck's.
 */
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { OAuthError } from '../../errors.ts';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** A Host value's name (an IPv6 address in its brackets) and port, in lower case; undefined when it is not host[:port]. */
function splitHost(host: string): { name: string; port: string | undefined } | undefined {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  return match ? { name: match[1] ?? '', port: match[2] } : undefined;
}

/** host[:port] in lower case, without the scheme's default port. */
function normalise(host: string, scheme: string): string {
  const split = splitHost(host);
  if (!split) return host.trim().toLowerCase();
  const { name, port } = split;
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

/**
 * The management port (/metrics, /healthz, /readyz) answers a Host that no DNS rebinding can
 * produce: a browser page of another site reads it only through a name whose DNS the attacker
 * answers, which is a registered domain and has a dot. So: an IP address, a name without a dot
 * (localhost, a container or service name such as idp-1), the address it listens on, or a name
 * listed in IDP_MANAGEMENT_HOSTS. The port is not compared: whoever asks chooses it, and port
 * mappings change it.
 */
export function createManagementHostCheck(management: { host: string; hosts: readonly string[] }): (host: string | undefined) => boolean {
  const listed = new Set([management.host, ...management.hosts].map((name) => name.toLowerCase()));
  return (host) => {
    const name = splitHost(host ?? '')?.name;
    if (name === undefined) return false;
    return isIP(name.startsWith('[') ? name.slice(1, -1) : name) !== 0 || /^[a-z0-9_-]+$/.test(name) || listed.has(name);
  };
}
