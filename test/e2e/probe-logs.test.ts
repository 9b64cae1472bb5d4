/**
 * Health probes in the log, as an operator reads it from a spawned server: at LOG_LEVEL=info a
 * load balancer's /healthz and /readyz leave no request line (they were half of all lines) while
 * /metrics still counts them; at LOG_LEVEL=debug their lines are there, at debug.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputWhen, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'e'.repeat(64);
const PINO_DEBUG = 20;
const PINO_INFO = 30;

type Line = Record<string, unknown>;

function requestLines(output: string): Line[] {
  return output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'request');
}

/** idp_http_requests_total of a route, all methods and statuses together. */
function requestCount(metrics: string, route: string): number {
  return metrics.split('\n')
    .filter((l) => l.startsWith('idp_http_requests_total{') && l.includes(`route="${route}"`))
    .reduce((total, l) => total + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe.runIf(postgresAvailable)('health probes in the log', () => {
  let db: TestDatabase;
  const dir = tempDir();
  let server: RunningServer | undefined;

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir.remove();
  });

  /** A probe of each kind and a discovery request, each with its own request id; then the log up to the last. */
  async function probeThenCall(level: string): Promise<{ lines: Line[]; metrics: string }> {
    server = await startServer({ IDP_SECRET, IDP_DATA_DIR: dir.path, DATABASE_URL: db.url, LOG_LEVEL: level });
    const get = async (path: string, id: string) => {
      const res = await fetch(`${(server as RunningServer).url}${path}`, { headers: { 'x-request-id': id } });
      expect(res.status, `${path}`).toBe(200);
      return res.text();
    };
    await get('/healthz', `${level}-healthz`);
    await get('/readyz', `${level}-readyz`);
    await get('/.well-known/openid-configuration', `${level}-discovery`);
    const metrics = await get('/metrics', `${level}-metrics`);
    // Lines go out in the order the answers did: once the last is there, every earlier one is.
    const output = await outputWhen(server, (o) => o.includes(`"reqId":"${level}-metrics"`));
    await server.stop();
    server = undefined;
    return { lines: requestLines(output), metrics };
  }

  it('at info, logs no line for /healthz or /readyz, yet counts them in /metrics', async () => {
    const { lines, metrics } = await probeThenCall('info');
    expect(lines.filter((l) => l.reqId === 'info-discovery').map((l) => [l.route, l.level])).toStrictEqual([['/.well-known/openid-configuration', PINO_INFO]]);
    expect(lines.filter((l) => l.reqId === 'info-metrics')).toHaveLength(1);
    expect(lines.filter((l) => l.route === '/healthz' || l.route === '/readyz'), 'probe lines at info').toStrictEqual([]);
    expect(requestCount(metrics, '/healthz')).toBe(1);
    // Ours, and those of the test helper that waited for the server to be ready.
    expect(requestCount(metrics, '/readyz')).toBeGreaterThanOrEqual(2);
  });

  it('at debug, logs the probes at debug and the rest at info', async () => {
    const { lines } = await probeThenCall('debug');
    const of = (id: string) => lines.filter((l) => l.reqId === id).map((l) => [l.route, l.level, l.status]);
    expect(of('debug-healthz')).toStrictEqual([['/healthz', PINO_DEBUG, 200]]);
    expect(of('debug-readyz')).toStrictEqual([['/readyz', PINO_DEBUG, 200]]);
    expect(of('debug-discovery')).toStrictEqual([['/.well-known/openid-configuration', PINO_INFO, 200]]);
  });
});
