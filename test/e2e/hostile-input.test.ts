/**
 * Bytes and clients an attacker or a careless library sends, from outside against a spawned
 * server on PostgreSQL: a NUL in a Basic client id (PostgreSQL refuses the byte, so it must never
 * reach a query), a secret sent raw in Basic, a client that hangs up mid-body, and a HEAD request
 * whose headers are too large.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basic } from '../helpers/oauth.ts';
import { outputWhen, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { HANG_LIMIT_MS } from '../helpers/waits.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'e'.repeat(64);
/** As `openssl rand -base64 32` prints it: `+`, `/` and `=` that a form-decoder would change. */
const BASE64_SECRET = 'q+Xz/9kLm3Pw+8Rt/Vb2Ny5Hc7Jd0Fs4Ge6Ka1Ub8Y=';
const SEED = {
  api_scopes: ['orders.read'],
  clients: [{ client_id: 'backend', client_secret: BASE64_SECRET, grant_types: ['client_credentials'], scopes: ['orders.read'] }],
};

/** Sends raw bytes and reads the answer until the server closes (or `ms` passes: hanging up on purpose). */
function rawExchange(port: number, bytes: string, ms = HANG_LIMIT_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let answer = '';
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(answer);
    });
  });
}

describe.runIf(postgresAvailable)('hostile input on PostgreSQL', () => {
  let db: TestDatabase;
  let server: RunningServer;
  const post = (path: string, body: Record<string, string>, authorization: string) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization }, body: new URLSearchParams(body) });

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, IDP_SECRET, LOG_LEVEL: 'info' };
    server = await startServer(env);
    await seedWith(SEED, env);
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  describe('a NUL in the client id of HTTP Basic', () => {
    const headers = [
      ['Basic ADoA (NUL:NUL)', 'Basic ADoA'],
      ['a form-encoded NUL (a%00b:x)', `Basic ${Buffer.from('a%00b:x').toString('base64')}`],
      ['a raw NUL inside a name', `Basic ${Buffer.from('a\u0000b:x').toString('base64')}`],
    ];
    const endpoints: Array<[string, Record<string, string>]> = [
      ['/connect/token', { grant_type: 'client_credentials' }],
      ['/connect/introspect', { token: 'anything' }],
      ['/connect/revoke', { token: 'anything' }],
    ];
    for (const [path, body] of endpoints) {
      it.each(headers)(`is a 401 invalid_client at ${path}: %s`, async (_name, authorization) => {
        const res = await post(path, body, authorization);
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: 'invalid_client' });
        expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
      });
    }

    it('never reached the database (no error logged)', () => {
      expect(server.output()).not.toMatch(/"level":(50|60)/);
      expect(server.output()).not.toContain('unexpected error');
    });
  });

  describe('a base64 client secret with + / =', () => {
    it('authenticates form-encoded as RFC 6749 §2.3.1 says', async () => {
      const res = await post('/connect/token', { grant_type: 'client_credentials', scope: 'orders.read' }, basic('backend', BASE64_SECRET));
      expect(res.status).toBe(200);
    });

    it('authenticates sent raw, as several client libraries send it', async () => {
      const raw = `Basic ${Buffer.from(`backend:${BASE64_SECRET}`).toString('base64')}`;
      const res = await post('/connect/token', { grant_type: 'client_credentials', scope: 'orders.read' }, raw);
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.json()).toMatchObject({ token_type: 'Bearer', scope: 'orders.read' });
    });

    it('still refuses a wrong secret either way', async () => {
      const wrong = BASE64_SECRET.replace('q+', 'q-');
      for (const authorization of [basic('backend', wrong), `Basic ${Buffer.from(`backend:${wrong}`).toString('base64')}`]) {
        expect((await post('/connect/token', { grant_type: 'client_credentials' }, authorization)).status).toBe(401);
      }
    });
  });

  it('logs a client that hangs up mid-body as an aborted request, not as an outage', async () => {
    const before = server.output().length;
    await rawExchange(server.port, `POST /connect/token HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 1000\r\n\r\ngrant_type=cli`, 300);
    const logged = (await outputWhen(server, (o) => o.slice(before).includes('aborted'))).slice(before);
    expect(logged).toContain('request aborted by the client');
    expect(logged).not.toContain('dependency unavailable');
  });

  describe('headers too large (431, answered before any route)', () => {
    const request = (method: string) => `${method} /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`;

    it('answers GET with the error in the OAuth shape', async () => {
      const answer = await rawExchange(server.port, request('GET'));
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toContain('"invalid_request"');
    });

    it('answers HEAD with the head only (RFC 9110 §9.3.2)', async () => {
      const answer = await rawExchange(server.port, request('HEAD'));
      expect(answer).toMatch(/^HTTP\/1\.1 431 /);
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe('');
    });
  });
});
