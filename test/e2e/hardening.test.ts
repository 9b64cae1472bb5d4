/**
 * Hardening, from outside: a sweep of bad input over every endpoint (oversized and absurdly
 * announced bodies, JSON and multipart bodies, repeated parameters, overlong values, invalid
 * percent-encoding, non-UTF-8 bytes, NUL bytes, a Host that is not the base URL's), where every
 * response must be below 500, free of stack traces and paths, and in the protocol's error shape:
 * JSON {error, error_description} at the API endpoints, the service's HTML error page with the
 * error code at the browser endpoints. Then HSTS and the __Host- cookie under an https base URL
 * (the service does not terminate TLS: requests come over plain http with Host idp.test), and
 * what IDP_TRUST_PROXY changes: X-Forwarded-For as the address of the per-address rate limit,
 * X-Forwarded-Host as the host checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/services.ts';
import { startServer, type RunningServer } from '../helpers/process.ts';
import {
  ALICE, SERVICE_SECRET, WEB_LOGOUT, WEB_REDIRECT, WEB_SECRET, expectJsonError, internalsIn, parseRawResponse, rawExchange, rawRequest, roomInRateWindow,
  seedOf, serviceClient, startDeployment, webClient, type Deployment, type RawRequest,
} from './operations-support.ts';
import { Browser, basic, pkce, readForm } from './token-lifecycle-support.ts';

type Kind = 'api' | 'page' | 'probe' | 'asset';

interface Endpoint {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  kind: Kind;
  /** Parameters of a sound request, in the query (GET) or the form body (POST); the first one is the one varied. */
  params: Record<string, string>;
  headers?: Record<string, string>;
  /** Whether the endpoint reads parameters (a repeated one is then invalid_request). */
  readsParams: boolean;
}

/** What came back, whichever way it was sent. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

interface Case {
  /** The request as node:http sends it, or raw bytes for what no client would send. */
  request?: RawRequest;
  raw?: Buffer;
  /** Statuses allowed (default: any below 500). */
  status?: number[];
  /** The error code expected when the answer is an error. */
  code?: string;
  /**
   * The request is refused while it is being read, before any route is known: either error
   * shape is accepted, but one of them it must be.
   */
  beforeRouting?: boolean;
}

const KIB = 1024;
const FORM = 'application/x-www-form-urlencoded';

const query = (params: Record<string, string>) => new URLSearchParams(params).toString();

/** The protocol's error shape for `kind` (or either shape before routing); '' when it fits. */
function shapeProblem(kind: Kind, answer: Answer, code: string | undefined, beforeRouting: boolean): string {
  const type = String(answer.headers['content-type'] ?? '');
  const jsonProblem = (): string => {
    if (!/^application\/json/.test(type)) return `content type ${type || '(none)'} instead of application/json`;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(answer.text) as Record<string, unknown>;
    } catch {
      return 'a body that is not JSON';
    }
    if (typeof body.error !== 'string' || !/^[a-z_]+$/.test(body.error)) return `no OAuth error code in ${answer.text.slice(0, 160)}`;
    if (typeof body.error_description !== 'string') return `no error_description in ${answer.text.slice(0, 160)}`;
    if (code !== undefined && body.error !== code) return `error ${body.error} instead of ${code}`;
    return '';
  };
  const pageProblem = (): string => {
    if (!/^text\/html/.test(type)) return `content type ${type || '(none)'} instead of text/html`;
    const shown = /Error code: <code>([a-z_]+)<\/code>/.exec(answer.text)?.[1];
    if (shown === undefined) return 'an HTML page without an error code';
    if (code !== undefined && shown !== code) return `page shows ${shown} instead of ${code}`;
    return '';
  };
  if (beforeRouting) {
    const asJson = jsonProblem();
    const asPage = pageProblem();
    return asJson === '' || asPage === '' ? '' : `neither shape: ${asJson}; ${asPage}`;
  }
  return kind === 'page' ? pageProblem() : jsonProblem();
}

describe.runIf(postgresAvailable)('hardening', () => {
  let deployment: Deployment;
  /** http://127.0.0.1:PORT as base URL, no proxy trusted. */
  let plain: RunningServer;
  /** IDP_BASE_URL=https://idp.test: reached over plain http with Host idp.test. */
  let secure: RunningServer;
  /** IDP_TRUST_PROXY=true, IDP_TOKEN_RATE_LIMIT=3. */
  let proxied: RunningServer;
  /** No proxy trusted, IDP_TOKEN_RATE_LIMIT=3. */
  let direct: RunningServer;
  let endpoints: Endpoint[];

  beforeAll(async () => {
    deployment = await startDeployment({ seed: seedOf([webClient('web'), serviceClient('service')], [ALICE]) });
    plain = deployment.servers[0] as RunningServer;
    [secure, proxied, direct] = await Promise.all([
      startServer({ ...deployment.env, IDP_BASE_URL: 'https://idp.test' }),
      startServer({ ...deployment.env, IDP_TRUST_PROXY: 'true', IDP_TOKEN_RATE_LIMIT: '3' }),
      startServer({ ...deployment.env, IDP_TOKEN_RATE_LIMIT: '3' }),
    ]);

    // A real interaction of a real browser, so that its pages get past the session check.
    const browser = new Browser();
    const authorizeParams = {
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 'st',
    };
    const page = await browser.follow(await browser.get(`${plain.url}/connect/authorize?${query(authorizeParams)}`), plain.url);
    expect(page.status, page.body.slice(0, 300)).toBe(200);
    const form = readForm(page.body, page.url);
    const interaction = new URL(page.url).pathname;
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

    endpoints = [
      { name: 'discovery', method: 'GET', path: '/.well-known/openid-configuration', kind: 'api', params: {}, readsParams: false },
      { name: 'jwks', method: 'GET', path: '/.well-known/jwks', kind: 'api', params: {}, readsParams: false },
      { name: 'authorize GET', method: 'GET', path: '/connect/authorize', kind: 'page', params: authorizeParams, readsParams: true },
      { name: 'authorize POST', method: 'POST', path: '/connect/authorize', kind: 'page', params: authorizeParams, readsParams: true },
      { name: 'interaction page', method: 'GET', path: interaction, kind: 'page', params: {}, headers: { cookie }, readsParams: false },
      {
        name: 'interaction sign-in', method: 'POST', path: `${interaction}/sign-in`, kind: 'page', headers: { cookie }, readsParams: true,
        params: { username: ALICE.username, password: 'not the password', ...form.fields },
      },
      {
        // client_secret_post: the varied parameter is the client_id, which is looked up.
        name: 'token', method: 'POST', path: '/connect/token', kind: 'api', readsParams: true,
        params: { client_id: 'service', client_secret: SERVICE_SECRET, grant_type: 'client_credentials', scope: 'orders.read' },
      },
      { name: 'userinfo GET', method: 'GET', path: '/connect/userinfo', kind: 'api', params: {}, headers: { authorization: 'Bearer not-a-token' }, readsParams: false },
      { name: 'userinfo POST', method: 'POST', path: '/connect/userinfo', kind: 'api', params: {}, headers: { authorization: 'Bearer not-a-token' }, readsParams: false },
      { name: 'introspect', method: 'POST', path: '/connect/introspect', kind: 'api', params: { token: 'not-a-token' }, headers: { authorization: basic('web', WEB_SECRET) }, readsParams: true },
      { name: 'revoke', method: 'POST', path: '/connect/revoke', kind: 'api', params: { client_id: 'web', client_secret: WEB_SECRET, token: 'not-a-token' }, readsParams: true },
      { name: 'logout GET', method: 'GET', path: '/connect/logout', kind: 'page', params: { client_id: 'web', post_logout_redirect_uri: WEB_LOGOUT, state: 'x' }, readsParams: true },
      { name: 'logout POST', method: 'POST', path: '/connect/logout', kind: 'page', params: { client_id: 'web', post_logout_redirect_uri: WEB_LOGOUT, state: 'x' }, readsParams: true },
      { name: 'healthz', method: 'GET', path: '/healthz', kind: 'probe', params: {}, readsParams: false },
      { name: 'readyz', method: 'GET', path: '/readyz', kind: 'probe', params: {}, readsParams: false },
      { name: 'metrics', method: 'GET', path: '/metrics', kind: 'probe', params: {}, readsParams: false },
      { name: 'stylesheet', method: 'GET', path: '/assets/idp.css', kind: 'asset', params: {}, readsParams: false },
      { name: 'unknown path', method: 'GET', path: '/no/such/endpoint', kind: 'api', params: {}, readsParams: false },
    ];
  });
  afterAll(async () => {
    await Promise.all([secure, proxied, direct].map((s) => s?.stop()));
    await deployment?.stop();
  });

  /** A request to `e` with its parameters replaced by `params` (already encoded), in the query or the body. */
  function send(e: Endpoint, encoded: string | Buffer, extra: Partial<RawRequest> = {}): RawRequest {
    const headers = { ...e.headers, ...extra.headers };
    if (e.method === 'GET') return { method: 'GET', path: encoded.length > 0 ? `${e.path}?${encoded.toString()}` : e.path, ...extra, headers };
    return { method: 'POST', path: e.path, body: encoded, ...extra, headers: { 'content-type': FORM, ...headers } };
  }

  const first = (e: Endpoint) => Object.keys(e.params)[0] ?? 'x';
  /** The endpoint's parameters with the first one's value replaced by `value` (raw, already encoded). */
  const withFirst = (e: Endpoint, value: string) => {
    const rest = { ...e.params };
    delete rest[first(e)];
    return [`${first(e)}=${value}`, query(rest)].filter((p) => p !== '').join('&');
  };
  /** The same as a form body with raw bytes in the first parameter's value. */
  const withFirstBytes = (e: Endpoint, bytes: number[]) => {
    const rest = { ...e.params };
    delete rest[first(e)];
    return Buffer.concat([Buffer.from(`${first(e)}=${encodeURIComponent(e.params[first(e)] ?? 'x')}`), Buffer.from(bytes), Buffer.from(`&${query(rest)}`)]);
  };
  const rawHead = (e: Endpoint, target: string, lines: string[]) =>
    [`${e.method} ${target} HTTP/1.1`, `Host: 127.0.0.1:${plain.port}`, ...Object.entries(e.headers ?? {}).map(([k, v]) => `${k}: ${v}`), ...lines, 'Connection: close', '', ''].join('\r\n');

  /** The bad inputs, each a function of the endpoint. */
  const inputs: Record<string, (e: Endpoint) => Case | undefined> = {
    'an oversized form body (70 KiB > 64 KiB)': (e) =>
      e.method === 'POST' ? { request: send(e, `${query(e.params)}&pad=${'a'.repeat(70 * KIB)}`), status: [413], code: 'invalid_request' } : undefined,
    'an absurd Content-Length (1 GB announced, a few bytes sent)': (e) =>
      e.method === 'POST'
        ? { raw: Buffer.from(`${rawHead(e, e.path, [`Content-Type: ${FORM}`, 'Content-Length: 1000000000'])}${query(e.params)}`), status: [413], code: 'invalid_request' }
        : undefined,
    'a Content-Length beyond any integer': (e) => ({
      raw: Buffer.from(`${rawHead(e, e.path, [`Content-Type: ${FORM}`, 'Content-Length: 99999999999999999999999'])}${query(e.params)}`),
      status: [400, 413], beforeRouting: true,
    }),
    'a JSON body': (e) =>
      e.method === 'POST'
        ? { request: send(e, JSON.stringify(e.params), { headers: { 'content-type': 'application/json' } }), status: [400, 415], code: 'invalid_request' }
        : undefined,
    'a multipart body': (e) => {
      if (e.method !== 'POST') return undefined;
      const parts = Object.entries(e.params).map(([k, v]) => `--b0undary\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('');
      return { request: send(e, `${parts}--b0undary--\r\n`, { headers: { 'content-type': 'multipart/form-data; boundary=b0undary' } }), status: [400, 415], code: 'invalid_request' };
    },
    'a repeated parameter': (e) => ({
      request: send(e, `${query(e.params)}&${first(e)}=${encodeURIComponent(e.params[first(e)] ?? 'again')}`),
      ...(e.readsParams ? { status: [400], code: 'invalid_request' } : {}),
    }),
    'a 100 KB query string': (e) => ({ request: { method: e.method, path: `${e.path}?${first(e)}=${'q'.repeat(100 * KIB)}`, headers: e.headers }, status: [414, 431], beforeRouting: true }),
    'a 10 KB parameter value': (e) => ({ request: send(e, withFirst(e, 'v'.repeat(10 * KIB))) }),
    'invalid percent-encoding (%FF%FE, %zz, a lone %)': (e) => ({ request: send(e, withFirst(e, '%FF%FE%zz%')) }),
    'non-UTF-8 bytes (0xFF 0xFE) raw in the form body': (e) =>
      e.method === 'POST' ? { request: send(e, withFirstBytes(e, [0xff, 0xfe, 0xc3])) } : undefined,
    'non-UTF-8 bytes (0xFF 0xFE) raw in the request line': (e) => {
      const [before = '', after = ''] = rawHead(e, '\u0001', []).split('\u0001');
      return { raw: Buffer.concat([Buffer.from(`${before}${e.path}?${first(e)}=`), Buffer.from([0xff, 0xfe]), Buffer.from(after)]), status: [400], beforeRouting: true };
    },
    // Another path than the endpoint's, which the router cannot even decode.
    'a path with invalid percent-encoding': (e) => ({ request: { method: e.method, path: `${e.path}%FF%FE`, headers: e.headers }, status: [400, 404], beforeRouting: true }),
    'a NUL byte (%00) in a parameter': (e) => ({ request: send(e, withFirst(e, `${encodeURIComponent(e.params[first(e)] ?? 'x')}%00`)) }),
    'a NUL byte raw in the form body': (e) =>
      e.method === 'POST' ? { request: send(e, withFirstBytes(e, [0])) } : undefined,
    'a NUL byte in a header': (e) => ({ raw: Buffer.from(rawHead(e, e.path, ['X-Note: a\u0000b'])), status: [400], beforeRouting: true }),
    'a Host header naming another host': (e) => ({
      request: { ...send(e, query(e.params)), host: 'evil.example' },
      ...(e.kind === 'probe' ? { status: [200] } : { status: [400], code: 'invalid_request' }),
    }),
  };

  for (const [input, make] of Object.entries(inputs)) {
    it(`answers ${input} at every endpoint below 500, without internals, in the protocol's error shape`, async () => {
      const problems: string[] = [];
      let sent = 0;
      for (const e of endpoints) {
        const c = make(e);
        if (!c) continue;
        sent += 1;
        let answer: Answer;
        try {
          if (c.raw) {
            const parsed = parseRawResponse(await rawExchange(plain.port, c.raw));
            answer = { status: parsed.status, headers: parsed.headers, text: parsed.body };
          } else {
            answer = await rawRequest(plain.port, c.request as RawRequest);
          }
        } catch (error) {
          problems.push(`${e.name}: no response (${String(error)})`);
          continue;
        }
        const what = `${e.name}: ${answer.status}`;
        if (answer.status === 0) problems.push(`${e.name}: no HTTP response`);
        if (answer.status >= 500) problems.push(`${what} ${answer.text.replace(/\s+/g, ' ').slice(0, 160)}`);
        if (c.status && !c.status.includes(answer.status)) problems.push(`${what} instead of ${c.status.join(' or ')}`);
        const internals = internalsIn(answer.text);
        if (internals) problems.push(`${what} ${internals}`);
        if (answer.status >= 400) {
          const shape = shapeProblem(e.kind, answer, c.code, c.beforeRouting ?? false);
          if (shape) problems.push(`${what} ${shape}`);
        }
      }
      expect(sent, 'the input applies to some endpoints').toBeGreaterThan(0);
      expect(problems, `${input}:\n${problems.join('\n')}`).toStrictEqual([]);
      expect(plain.child.exitCode, 'the server is still running').toBeNull();
    });
  }

  it('keeps answering after the sweep', async () => {
    const res = await rawRequest(plain.port, { path: '/readyz' });
    expect(res.status).toBe(200);
    const token = await rawRequest(plain.port, {
      method: 'POST', path: '/connect/token', headers: { 'content-type': FORM, authorization: basic('service', SERVICE_SECRET) },
      body: query({ grant_type: 'client_credentials', scope: 'orders.read' }),
    });
    expect(token.status, token.text).toBe(200);
  });

  it('sends the anti-framing, no-sniff and referrer headers, a Content-Security-Policy and the request id on every answer, errors included', async () => {
    const cases: [string, RawRequest][] = [
      ...endpoints.map((e): [string, RawRequest] => [e.name, send(e, query(e.params))]),
      ...endpoints.map((e): [string, RawRequest] => [`${e.name}, another host`, { ...send(e, query(e.params)), host: 'evil.example' }]),
      // Refused by the router before any route or hook runs.
      ['a path the router cannot decode', { path: '/connect/token%FF%FE' }],
      ['a client that does not exist', send(endpoints.find((e) => e.name === 'token') as Endpoint, query({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' }))],
    ];
    const problems: string[] = [];
    for (const [name, request] of cases) {
      const { status, headers } = await rawRequest(plain.port, { ...request, headers: { ...request.headers, 'x-request-id': 'hdr-check-1' } });
      const what = `${name} (${status})`;
      if (headers['x-frame-options'] !== 'DENY') problems.push(`${what}: x-frame-options ${String(headers['x-frame-options'])}`);
      if (headers['x-content-type-options'] !== 'nosniff') problems.push(`${what}: x-content-type-options ${String(headers['x-content-type-options'])}`);
      if (headers['referrer-policy'] !== 'no-referrer') problems.push(`${what}: referrer-policy ${String(headers['referrer-policy'])}`);
      if (!/frame-ancestors 'none'/.test(String(headers['content-security-policy']))) problems.push(`${what}: content-security-policy ${String(headers['content-security-policy'])}`);
      if (headers['x-request-id'] !== 'hdr-check-1') problems.push(`${what}: x-request-id ${String(headers['x-request-id'])}`);
    }
    expect(problems, problems.join('\n')).toStrictEqual([]);
    // Pages keep their own policy (their stylesheet, where their form may post), not the API's.
    const page = await rawRequest(plain.port, send(endpoints.find((e) => e.name === 'interaction page') as Endpoint, ''));
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toMatch(/style-src 'self'.*form-action 'self'/);
  });

  describe('HSTS and cookies', () => {
    const authorizeQuery = () => query({
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid', code_challenge: pkce().challenge, code_challenge_method: 'S256',
    });

    it('sends Strict-Transport-Security and a Secure __Host- session cookie when IDP_BASE_URL is https', async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks', '/healthz', '/no/such/endpoint']) {
        const res = await rawRequest(secure.port, { path, host: 'idp.test' });
        expect(res.status, `${path}: ${res.text.slice(0, 200)}`).toBeLessThan(500);
        expect(res.headers['strict-transport-security'], path).toMatch(/^max-age=\d{7,}/);
      }
      const discovery = await rawRequest(secure.port, { path: '/.well-known/openid-configuration', host: 'idp.test' });
      expect(discovery.status).toBe(200);
      expect((JSON.parse(discovery.text) as { issuer: string }).issuer).toBe('https://idp.test/');

      const page = await rawRequest(secure.port, { path: `/connect/authorize?${authorizeQuery()}`, host: 'idp.test' });
      expect([302, 303], page.text.slice(0, 200)).toContain(page.status);
      expect(page.headers['strict-transport-security']).toMatch(/^max-age=\d{7,}/);
      const cookies = page.headers['set-cookie'] ?? [];
      expect(cookies.length, 'a session cookie is set').toBeGreaterThan(0);
      for (const cookie of cookies) {
        expect(cookie).toMatch(/^__Host-[^=]+=/);
        expect(cookie).toMatch(/;\s*Secure(;|$)/i);
        expect(cookie).toMatch(/;\s*Path=\/(;|$)/i);
        expect(cookie).toMatch(/;\s*HttpOnly(;|$)/i);
        expect(cookie).not.toMatch(/;\s*Domain=/i);
      }
      // The https deployment answers for its own host only.
      const foreign = await rawRequest(secure.port, { path: '/.well-known/openid-configuration' });
      expectJsonError(foreign, 400, 'invalid_request', 'https deployment, Host 127.0.0.1');
    });

    it('sends no Strict-Transport-Security and no Secure cookie when IDP_BASE_URL is http', async () => {
      for (const path of ['/.well-known/openid-configuration', '/healthz', '/no/such/endpoint']) {
        const res = await rawRequest(plain.port, { path });
        expect(res.status).toBeLessThan(500);
        expect(res.headers['strict-transport-security'], path).toBeUndefined();
      }
      const page = await rawRequest(plain.port, { path: `/connect/authorize?${authorizeQuery()}` });
      expect([302, 303]).toContain(page.status);
      expect(page.headers['strict-transport-security']).toBeUndefined();
      const cookies = page.headers['set-cookie'] ?? [];
      expect(cookies.length).toBeGreaterThan(0);
      for (const cookie of cookies) {
        expect(cookie).not.toMatch(/^__Host-/);
        expect(cookie).not.toMatch(/;\s*Secure(;|$)/i);
        expect(cookie).toMatch(/;\s*HttpOnly(;|$)/i);
      }
    });
  });

  describe('IDP_TRUST_PROXY', () => {
    const octet = () => 1 + Math.floor(Math.random() * 250);
    const address = () => `10.${octet()}.${octet()}.${octet()}`;
    /** A token request of a client that does not exist: refused 401, but counted against its address first. */
    const stranger = (server: RunningServer, n: number, forwardedFor: string) =>
      rawRequest(server.port, {
        method: 'POST', path: '/connect/token',
        headers: { 'content-type': FORM, authorization: basic(`nobody-${n}-${octet()}`, SERVICE_SECRET), 'x-forwarded-for': forwardedFor },
        body: query({ grant_type: 'client_credentials' }),
      });

    it('with it, X-Forwarded-For is the address of the per-address token budget', async () => {
      await roomInRateWindow(6);
      const mine = address();
      for (let i = 0; i < 3; i++) expectJsonError(await stranger(proxied, i, mine), 401, 'invalid_client', `request ${i + 1} from ${mine}`);
      const fourth = await stranger(proxied, 3, mine);
      expectJsonError(fourth, 429, 'slow_down', `the 4th request from ${mine}`);
      expect(fourth.headers['retry-after']).toMatch(/^\d+$/);
      // Another forwarded address has a budget of its own (the proxy's own address is the same).
      expectJsonError(await stranger(proxied, 4, address()), 401, 'invalid_client', 'another forwarded address');
      // The client's address is the first of the chain the proxies appended to.
      expectJsonError(await stranger(proxied, 5, `${mine}, 192.0.2.1`), 429, 'slow_down', 'the same client behind a second proxy');
    });

    it('without it, X-Forwarded-For is ignored: every request counts against the connecting address', async () => {
      await roomInRateWindow(6);
      for (let i = 0; i < 3; i++) expectJsonError(await stranger(direct, i, address()), 401, 'invalid_client', `request ${i + 1}`);
      expectJsonError(await stranger(direct, 3, address()), 429, 'slow_down', 'the 4th request, whatever X-Forwarded-For says');
    });

    it('with it, X-Forwarded-Host is the host checked; without it, X-Forwarded-Host is ignored', async () => {
      const ownHost = (server: RunningServer) => `127.0.0.1:${server.port}`;
      const discovery = (server: RunningServer, host: string, forwardedHost?: string) =>
        rawRequest(server.port, { path: '/.well-known/openid-configuration', host, headers: forwardedHost ? { 'x-forwarded-host': forwardedHost } : {} });

      expectJsonError(await discovery(proxied, ownHost(proxied), 'evil.example'), 400, 'invalid_request', 'trusted proxy names another host');
      expect((await discovery(proxied, 'internal-name:8080', ownHost(proxied))).status, 'trusted proxy names our host').toBe(200);
      expect((await discovery(direct, ownHost(direct), 'evil.example')).status, 'untrusted X-Forwarded-Host').toBe(200);
      expectJsonError(await discovery(direct, 'evil.example', ownHost(direct)), 400, 'invalid_request', 'untrusted X-Forwarded-Host cannot fix a foreign Host');
    });
  });
});
