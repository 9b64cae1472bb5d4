/**
 * The service answers for its own address only: a request for another Host (or, behind a
 * trusted proxy, X-Forwarded-Host) is refused, so no page or redirect is ever made for a host an
 * attacker chose. Loopback names are one host, for development.
 */
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
