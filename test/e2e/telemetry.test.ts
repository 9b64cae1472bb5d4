/**
 * Telemetry as an operator wires it up, driven from outside: the management port
 * (IDP_MANAGEMENT_PORT) with Prometheus metrics of the process, the build and the connections,
 * the public port without /metrics, and the reverse proxy's configuration that keeps it private.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../helpers/oauth.ts';
import { ROOT, freePort, runIdp, seedWith, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { waitUntil } from '../helpers/waits.ts';
import { REDIS_URL, createMigratedTestDatabase, postgresAvailable, redisAvailable, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'd'.repeat(64);
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The value of the one sample `name{labels}` in Prometheus text; undefined when absent. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name}{`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe.runIf(postgresAvailable && redisAvailable)('the management port', () => {
  let db: TestDatabase;
  let server: RunningServer;
  let managementUrl: string;
  const dir = tempDir();

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    const managementPort = await freePort();
    managementUrl = `http://127.0.0.1:${managementPort}`;
    server = await startServer({ IDP_SECRET, IDP_DATA_DIR: dir.path, DATABASE_URL: db.url, REDIS_URL, IDP_MANAGEMENT_PORT: String(managementPort) });
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir.remove();
  });

  it('serves /metrics, /healthz and /readyz there, and /metrics no longer on the public port', async () => {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${managementUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${managementUrl}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toMatchObject({ status: 200, body: { status: 'ready', database: 'ok', store: 'ok' } });
    const metrics = await fetch(`${managementUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('has the process, build and connection metrics beside those of the requests', async () => {
    expect((await fetch(`${server.url}/.well-known/openid-configuration`)).status).toBe(200);
    const text = await (await fetch(`${managementUrl}/metrics`)).text();
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(sample(text, name), name).toBeGreaterThanOrEqual(0);
    }
    expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram');
    expect(sample(text, 'idp_build_info', `{version="${VERSION}"}`)).toBe(1);
    expect(sample(text, 'idp_db_pool_connections_in_use')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'idp_db_pool_waiting')).toBe(0);
    expect(sample(text, 'idp_redis_connected')).toBe(1);
    // Today's metrics, unchanged in name and labels; the management port's own requests are not counted.
    expect(sample(text, 'idp_http_requests_total', '{route="/.well-known/openid-configuration",method="GET",status="200"}')).toBe(1);
    expect(text).not.toContain('route="/metrics"');
    for (const name of ['idp_http_request_duration_seconds', 'idp_http_requests_in_flight', 'idp_tokens_issued_total', 'idp_sign_ins_total', 'idp_rate_limited_total', 'idp_audit_events_total']) {
      expect(text, name).toContain(`# HELP ${name} `);
    }
  });

  it('exposes every series the Grafana dashboard and the alert rules in deploy/ query', async () => {
    const text = await (await fetch(`${managementUrl}/metrics`)).text();
    const exposed = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name = '', type]) =>
      type === 'histogram' ? [name, `${name}_bucket`, `${name}_sum`, `${name}_count`] : [name]));
    const queried = (file: string) => new Set(readFileSync(join(ROOT, file), 'utf8').match(/\b(idp|nodejs|process)_[a-z0-9_]+\b/g));
    for (const file of ['deploy/grafana/idp-dashboard.json', 'deploy/prometheus/alerts.yml']) {
      const names = [...queried(file)];
      expect(names.length, file).toBeGreaterThan(5);
      expect(names.filter((name) => !exposed.has(name)), file).toStrictEqual([]);
    }
  });
});

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

/** A minimal OTLP/HTTP receiver: every span of every JSON export posted to /v1/traces, with its scope name. */
async function startOtlpReceiver(): Promise<{ url: string; spans: Array<OtlpSpan & { scope: string }>; paths: string[]; close(): Promise<void> }> {
  const spans: Array<OtlpSpan & { scope: string }> = [];
  const paths: string[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      paths.push(request.url ?? '');
      if (request.url === '/v1/traces') {
        const exported = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }> }> };
        for (const resource of exported.resourceSpans) for (const scope of resource.scopeSpans) spans.push(...scope.spans.map((span) => ({ ...span, scope: scope.scope.name })));
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { url: `http://127.0.0.1:${port}`, spans, paths, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const attribute = (span: OtlpSpan, key: string): unknown => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value === undefined ? undefined : Object.values(value)[0];
};

describe.runIf(postgresAvailable && redisAvailable)('OpenTelemetry traces', () => {
  let db: TestDatabase;
  let server: RunningServer;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  const dir = tempDir();
  const SECRET = 'otel-service-secret-0123456789abcdefghijkl';

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    receiver = await startOtlpReceiver();
    const env = { IDP_SECRET, IDP_DATA_DIR: dir.path, DATABASE_URL: db.url, REDIS_URL };
    await seedWith({ api_scopes: ['orders.read'], clients: [{ client_id: 'svc', client_secret: SECRET, grant_types: ['client_credentials'], scopes: ['orders.read'] }] }, env);
    server = await startServer({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '100' });
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
    await db?.drop();
    dir.remove();
  });

  it('sends a span per request with its route and request id, database and Redis spans beneath, and no secret', async () => {
    const token = await fetch(`${server.url}/connect/token`, {
      method: 'POST',
      headers: { authorization: basic('svc', SECRET), 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'otel-token-1' },
      body: 'grant_type=client_credentials&scope=orders.read',
    });
    const issued = (await token.json()) as { access_token: string };
    expect(token.status).toBe(200);
    const state = 'state-that-must-not-be-traced-42';
    const authorize = await fetch(`${server.url}/connect/authorize?client_id=svc&response_type=code&state=${state}`, { headers: { 'x-request-id': 'otel-authorize-1' }, redirect: 'manual' });
    await authorize.body?.cancel();

    // The spans arrive when the exporter sends its batch: wait for them, not for a clock.
    const requestSpan = (id: string) => receiver.spans.find((s) => attribute(s, 'idp.request_id') === id);
    const exporting = { processes: [server.child], detail: () => JSON.stringify(receiver.spans.map((s) => s.name)) };
    await waitUntil('the spans of both requests', () => requestSpan('otel-token-1') && requestSpan('otel-authorize-1'), exporting);
    const tokenSpan = requestSpan('otel-token-1');
    expect(tokenSpan, JSON.stringify(receiver.spans.map((s) => s.name))).toBeDefined();
    expect(attribute(tokenSpan as OtlpSpan, 'http.route')).toBe('/connect/token');
    expect(attribute(requestSpan('otel-authorize-1') as OtlpSpan, 'http.route')).toBe('/connect/authorize');

    // The calls to PostgreSQL (the client, on first use) and Redis (the rate limit) of the token request, in its trace.
    const inTokenTrace = (lib: string) => receiver.spans.some((s) => s.traceId === tokenSpan?.traceId && s.scope.includes(lib));
    await waitUntil('the pg and ioredis spans of the token request', () => inTokenTrace('pg') && inTokenTrace('ioredis'), exporting);
    const inTrace = receiver.spans.filter((s) => s.traceId === tokenSpan?.traceId);
    expect(inTrace.some((s) => s.scope.includes('instrumentation-pg') && s.parentSpanId), inTrace.map((s) => `${s.scope} ${s.name}`).join(', ')).toBe(true);
    expect(inTrace.some((s) => s.scope.includes('instrumentation-ioredis') && s.parentSpanId)).toBe(true);

    // Nothing secret in any attribute: not the client secret, its Basic header, the token, nor a query string.
    const everything = JSON.stringify(receiver.spans);
    for (const secret of [SECRET, issued.access_token, basic('svc', SECRET).slice('Basic '.length), state, IDP_SECRET]) expect(everything).not.toContain(secret);
    expect(receiver.paths.every((p) => p === '/v1/traces')).toBe(true);
  });
});

describe('IDP_MANAGEMENT_PORT', () => {
  it('is refused at start when it is no port (2), and a port in use stops the start (1)', async () => {
    const dir = tempDir();
    try {
      const bad = await runIdp(['serve'], { IDP_DATA_DIR: dir.path, IDP_MANAGEMENT_PORT: 'metrics' });
      expect({ code: bad.code, stderr: bad.stderr.trim() }).toStrictEqual({
        code: 2, stderr: 'configuration error: IDP_MANAGEMENT_PORT must be a whole number from 0 to 65535 (example: IDP_MANAGEMENT_PORT=9464)',
      });
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      try {
        const port = String((taken.address() as net.AddressInfo).port);
        const clash = await runIdp(['serve'], { IDP_SECRET, IDP_DATA_DIR: dir.path, PORT: String(await freePort()), IDP_MANAGEMENT_PORT: port });
        expect(clash.code).toBe(1);
        expect(clash.stderr).toMatch(/^idp serve: .*EADDRINUSE/m);
      } finally {
        taken.close();
      }
    } finally {
      dir.remove();
    }
  });
});

describe.runIf(postgresAvailable && redisAvailable)('the management port in production', () => {
  it('defaults to 9464 when IDP_MANAGEMENT_PORT is unset: /metrics is served there and is 404 on the public port', async () => {
    const db = await createMigratedTestDatabase();
    const dir = tempDir();
    // `undefined` keeps the helper from choosing a free port: the default itself is under test.
    const production = { NODE_ENV: 'production', IDP_ALLOW_HTTP: '1', IDP_SECRET, IDP_DATA_DIR: dir.path, DATABASE_URL: db.url, REDIS_URL, IDP_MANAGEMENT_PORT: undefined };
    const server = await startServer(production);
    try {
      const publicMetrics = await fetch(`${server.url}/metrics`);
      expect(publicMetrics.status).toBe(404);
      expect(await publicMetrics.text()).not.toContain('idp_');
      const metrics = await fetch('http://127.0.0.1:9464/metrics');
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('idp_http_requests_total');
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      await server.stop();
      await db.drop();
      dir.remove();
    }
  });
});

const promtool = spawnSync('promtool', ['--version']).status === 0;
if (!promtool) console.log('skipped: the alert rules need promtool (Debian package prometheus) to be checked');

describe.runIf(promtool)('deploy/prometheus/alerts.yml', () => {
  it('passes promtool check rules, and its alerts fire as its unit tests say', () => {
    const cwd = join(ROOT, 'deploy/prometheus');
    const checked = spawnSync('promtool', ['check', 'rules', 'alerts.yml'], { cwd, encoding: 'utf8' });
    expect({ status: checked.status, output: checked.stdout + checked.stderr }).toMatchObject({ status: 0, output: expect.stringContaining('SUCCESS: 12 rules found') });
    const tested = spawnSync('promtool', ['test', 'rules', 'alerts-test.yml'], { cwd, encoding: 'utf8' });
    expect({ status: tested.status, output: tested.stdout + tested.stderr }).toMatchObject({ status: 0, output: expect.stringContaining('SUCCESS') });
  });
});

describe('deploy/grafana/idp-dashboard.json', () => {
  it('is a dashboard whose every panel queries Prometheus', () => {
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy/grafana/idp-dashboard.json'), 'utf8')) as { uid: string; panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
    expect(dashboard.uid).toBe('idp-overview');
    expect(dashboard.panels.length).toBeGreaterThan(10);
    for (const panel of dashboard.panels) expect(panel.targets.length, panel.title).toBeGreaterThan(0);
  });
});

describe('deploy/nginx.conf', () => {
  it('does not publish /metrics', () => {
    const conf = readFileSync(join(ROOT, 'deploy/nginx.conf'), 'utf8');
    expect(conf).toMatch(/location = \/metrics \{\s*return 404;\s*\}/);
  });
});
