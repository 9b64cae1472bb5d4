/**
 * The management port (IDP_MANAGEMENT_PORT) against DNS rebinding, driven from outside: a page
 * of evil.example whose name now resolves to the port's address sends `Host: evil.example:PORT`
 * and must read nothing. What Prometheus and probes send keeps working: an IP address, loopback
 * names, a container or service name (compose scrapes idp-1:9464), a listed name.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, outputWhen, runIdp, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'f'.repeat(64);

/** GET `path` on 127.0.0.1:`port`, with the Host header a browser or a scraper would send. */
function get(port: number, path: string, host: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe.runIf(postgresAvailable)('the management port and the Host it is named by', () => {
  let db: TestDatabase;
  let server: RunningServer;
  let port: number;
  const dir = tempDir();

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    port = await freePort();
    server = await startServer({
      IDP_SECRET, IDP_DATA_DIR: dir.path, DATABASE_URL: db.url, LOG_LEVEL: 'info',
      IDP_MANAGEMENT_PORT: String(port), IDP_MANAGEMENT_HOSTS: 'metrics.internal.example, idp.monitoring.svc',
    });
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dir.remove();
  });

  it.each([
    ['evil.example:PORT', '/metrics'],
    ['evil.example:PORT', '/healthz'],
    ['evil.example:PORT', '/readyz'],
    ['evil.example', '/metrics'],
    ['EVIL.example:PORT', '/metrics'],
    ['idp-1.evil.example:9464', '/metrics'],
    ['metrics.internal.example.evil.example:PORT', '/metrics'],
    ['127.0.0.1.evil.example:PORT', '/metrics'],
  ])('refuses Host %s for %s in the OAuth error shape, with nothing of the answer', async (host, path) => {
    const res = await get(port, path, host.replace('PORT', String(port)));
    expect(res.status).toBe(400);
    expect(res.type).toMatch(/^application\/json/);
    const body = JSON.parse(res.body) as Record<string, string>;
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toContain('IDP_MANAGEMENT_HOSTS');
    expect(res.body).not.toMatch(/idp_http_requests_total|"status"/);
  });

  it.each([
    '127.0.0.1:PORT',
    'localhost:PORT',
    'LocalHost:PORT',
    '[::1]:PORT',
    // Prometheus in compose scrapes the service name; a mapped port may differ.
    'idp-1:9464',
    // Kubernetes discovery scrapes the pod's address.
    '10.1.2.3:9464',
    '[fd00::7]:9464',
    // Listed in IDP_MANAGEMENT_HOSTS.
    'metrics.internal.example:9464',
    'IDP.monitoring.svc',
  ])('answers Host %s', async (host) => {
    const named = host.replace('PORT', String(port));
    expect((await get(port, '/metrics', named)).body).toContain('idp_http_requests_total');
    expect((await get(port, '/healthz', named)).status).toBe(200);
    expect((await get(port, '/readyz', named)).status).toBe(200);
  });

  it('logs a refusal with the host it named', async () => {
    await get(port, '/metrics', 'rebound.evil.example:80');
    expect(await outputWhen(server, (output) => output.includes('"host":"rebound.evil.example:80"'))).toContain('"host":"rebound.evil.example:80"');
  });

  it('stops the start with one line when IDP_MANAGEMENT_HOSTS holds a port or a scheme', async () => {
    for (const value of ['idp.monitoring.svc:9464', 'http://idp.monitoring.svc']) {
      const result = await runIdp(['migrate'], { IDP_SECRET, DATABASE_URL: db.url, IDP_MANAGEMENT_HOSTS: value });
      expect({ code: result.code, stderr: result.stderr }).toStrictEqual({
        code: 2,
        stderr: `configuration error: IDP_MANAGEMENT_HOSTS must be host names separated by commas, without port or scheme (${value} is not one) `
          + '(example: IDP_MANAGEMENT_HOSTS=idp.monitoring.svc,metrics.internal.example)\n',
      });
    }
  });
});
