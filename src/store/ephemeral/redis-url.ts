/**
 * The forms REDIS_URL takes, read without ioredis so that the configuration can check them at
 * start (a `redis+cluster://` host list is no WHATWG URL: `new URL()` refuses it).
 */

export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'sentinel' | 'cluster'; nodes: Array<{ host: string; port: number }>; master: string; db: number; password: string | undefined };

export class RedisUrlError extends Error {}

const MULTI_HOST = /^redis\+(sentinel|cluster):\/\/(?:[^:@/]*:([^@/]*)@)?([^/@]+)(?:\/([^/]+))?(?:\/(\d+))?$/;

/**
 * redis://, rediss:// (TLS), redis+sentinel://[:password@]host:port[,host:port...]/master[/db]
 * and redis+cluster://[:password@]host:port[,host:port...]. Throws RedisUrlError on anything else.
 */
export function parseRedisUrl(url: string): RedisTarget {
  if (/^redis\+/i.test(url)) return parseMultiHost(url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RedisUrlError('is not a URL');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new RedisUrlError(`has an unknown scheme ${parsed.protocol}`);
  if (!parsed.hostname) throw new RedisUrlError('names no host');
  return { kind: 'single', url };
}

function parseMultiHost(url: string): RedisTarget {
  const match = MULTI_HOST.exec(url);
  if (!match) throw new RedisUrlError('is not redis+sentinel://host:port,…/master[/db] or redis+cluster://host:port,…');
  const [, kind = 'sentinel', password, hosts = '', master, db] = match;
  const defaultPort = kind === 'sentinel' ? 26379 : 6379;
  const nodes = hosts.split(',').map((node) => parseNode(node.trim(), defaultPort));
  if (kind === 'cluster' && (master !== undefined || db !== undefined)) throw new RedisUrlError('a cluster URL takes no path (a cluster has one database and no master name)');
  return {
    kind: kind as 'sentinel' | 'cluster',
    nodes,
    master: master === undefined ? 'mymaster' : decodeURIComponent(master),
    db: db ? Number(db) : 0,
    password: password ? decodeURIComponent(password) : undefined,
  };
}

/** `host`, `host:port` or `[v6]:port`. */
function parseNode(node: string, defaultPort: number): { host: string; port: number } {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._-]+))(?::(\d{1,5}))?$/.exec(node);
  const host = match?.[1] ?? match?.[2];
  const port = match?.[3] === undefined ? defaultPort : Number(match[3]);
  if (!host || port < 1 || port > 65535) throw new RedisUrlError(`has a node "${node}" that is not host or host:port`);
  return { host, port };
}

/** Where a Redis URL points, without its password: for messages. */
export function describeRedisTarget(target: RedisTarget): string {
  if (target.kind === 'single') {
    const url = new URL(target.url);
    return `Redis at ${url.host}`;
  }
  const nodes = target.nodes.map((n) => `${n.host.includes(':') ? `[${n.host}]` : n.host}:${n.port}`).join(',');
  return target.kind === 'cluster' ? `Redis Cluster at ${nodes}` : `Redis Sentinel master ${target.master} at ${nodes}`;
}
