/**
 * Logs and metrics of a full session of use, read from outside: one server whose stdout the test
 * captures, a session (sign-in with password and TOTP, code exchange, userinfo, refresh,
 * introspection, revocation, logout, client credentials, a failed sign-in, a refresh reuse, a
 * tripped token rate limit), then:
 * - no secret, code, token, cookie or CSRF value the test used or received appears in any line;
 * - one JSON line per request, with the request id (the caller's X-Request-Id when it looks like
 *   one, else a fresh one), and audit lines (`event`) for what happened;
 * - /metrics in Prometheus text counts exactly what the session did.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/services.ts';
import { outputWhen, type RunningServer } from '../helpers/process.ts';
import { awayFromStepEnd, describePage, isOtpPage, kindOf, nowSeconds, submit, totp } from './account-support.ts';
import {
  ALICE, IDP_SECRET, MIA, SERVICE_SECRET, TOTP_SECRET, WEB_LOGOUT, WEB_REDIRECT, WEB_SECRET, roomInRateWindow, seedOf, serviceClient, startDeployment,
  webClient,
  type Deployment,
} from './operations-support.ts';
import { Browser, basic, decodeJwt, isSignInPage, pkce, readForm, type Page } from './token-lifecycle-support.ts';

const BURST_SECRET = 'ops-burst-secret-0123456789abcdefghijklmn';
const RATE_LIMIT = 20;
const WRONG_PASSWORD = 'a wrong password for alice 31';

/** Every request of the test carries its own X-Request-Id; what came back for each is kept. */
class Trace {
  private count = 0;
  readonly requests: Array<{ id: string; method: string; path: string; status: number; echoed: string | null }> = [];
  next(): string {
    this.count += 1;
    return `lm-${this.count}`;
  }
  record(id: string, method: string, url: string, status: number, headers: Headers): void {
    this.requests.push({ id, method, path: new URL(url).pathname, status, echoed: headers.get('x-request-id') });
  }
}

class TracedBrowser extends Browser {
  private readonly trace: Trace;
  constructor(trace: Trace) {
    super();
    this.trace = trace;
  }
  override async request(url: string, init: RequestInit = {}): Promise<Page> {
    const id = this.trace.next();
    const headers = new Headers(init.headers);
    headers.set('x-request-id', id);
    const page = await super.request(url, { ...init, headers });
    this.trace.record(id, init.method ?? 'GET', url, page.status, page.headers);
    return page;
  }
  cookieValues(): string[] {
    return [...this.cookies.values()];
  }
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text exposition format 0.0.4 -> samples (HELP and TYPE lines checked for shape). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      expect(line, 'a comment line').toMatch(/^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* \S/);
      continue;
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(match, `a sample line: ${line}`).not.toBeNull();
    const [, name = '', labelText = '', value = ''] = match ?? [];
    const labels: Record<string, string> = {};
    for (const pair of labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
    samples.push({ name, labels, value: Number(value) });
  }
  return samples;
}

/** The samples of `name` whose labels include `labels`. */
function select(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

/**
 * Whether `value` occurs in `text`; a value of digits only (a TOTP code) must stand on its own,
 * not inside a longer number such as a timestamp.
 */
function occurs(text: string, value: string): boolean {
  if (!/^\d+$/.test(value)) return text.includes(value);
  return new RegExp(`(?<!\\d)${value}(?!\\d)`).test(text);
}

const sum = (samples: Sample[]) => samples.reduce((total, s) => total + s.value, 0);

describe.runIf(postgresAvailable)('logs and metrics of a full session', () => {
  let deployment: Deployment;
  let server: RunningServer;
  let promotedKid = '';
  const trace = new Trace();
  /** Every secret value the test used or received. */
  const secrets = new Map<string, string>();
  /** What the session did, counted by the test. */
  const did = { codeExchanges: 0, refreshes: 0, clientCredentials: 0, tokenRequests: 0, token200: 0, token429: 0, signInSuccess: 0, signInFailure: 0 };
  let lines: Array<Record<string, unknown>> = [];
  let rawOutput = '';

  const remember = (name: string, value: unknown) => {
    expect(typeof value, `${name} is a string`).toBe('string');
    expect(String(value).length, `${name} is long enough to search for`).toBeGreaterThanOrEqual(6);
    secrets.set(name, String(value));
  };

  /** A traced call outside the browser. */
  async function call(path: string, init: RequestInit & { form?: Record<string, string> } = {}): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
    const id = trace.next();
    const headers = new Headers(init.headers);
    headers.set('x-request-id', id);
    let body = init.body;
    if (init.form) {
      headers.set('content-type', 'application/x-www-form-urlencoded');
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(`${server.url}${path}`, { ...init, headers, body, redirect: 'manual' });
    trace.record(id, init.method ?? 'GET', `${server.url}${path}`, res.status, res.headers);
    const text = await res.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { unparsed: text };
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  async function tokenCall(form: Record<string, string>, headers: Record<string, string> = {}) {
    const res = await call('/connect/token', { method: 'POST', form, headers });
    did.tokenRequests += 1;
    if (res.status === 200) did.token200 += 1;
    if (res.status === 429) did.token429 += 1;
    return res;
  }

  /** Authorization request URL for `web` (PKCE S256), remembering the verifier. */
  function authorizeUrl(name: string): { url: string; verifier: string; state: string } {
    const { verifier, challenge } = pkce();
    remember(`${name} code_verifier`, verifier);
    const state = `state-${name.replace(/\W/g, '')}`;
    const query = new URLSearchParams({
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid profile offline_access',
      code_challenge: challenge, code_challenge_method: 'S256', state, nonce: `nonce-${state}`,
    });
    return { url: `${server.url}/connect/authorize?${query}`, verifier, state };
  }

  function codeFrom(page: Page, state: string): string {
    expect(page.status, describePage(page)).toBe(302);
    const params = new URL(page.location ?? '').searchParams;
    expect(params.get('state')).toBe(state);
    return params.get('code') ?? '';
  }

  beforeAll(async () => {
    deployment = await startDeployment({
      seed: seedOf([webClient('web'), serviceClient('service'), { ...serviceClient('burst'), client_secret: BURST_SECRET }], [ALICE, MIA]),
      env: { IDP_REFRESH_TOKEN_REUSE_GRACE: '0', IDP_TOKEN_RATE_LIMIT: String(RATE_LIMIT), LOG_LEVEL: 'info' },
      // Automatic rotation due at start: the current key has signed for 100 days (over the
      // 90-day interval), its successor was published two days ago (over the one-day lead).
      async prepare({ idp, sql }) {
        for (let i = 0; i < 2; i++) expect((await idp(['keys', 'rotate'])).code).toBe(0);
        const keys = await sql<{ kid: string; state: string }>(`SELECT kid, state FROM signing_keys ORDER BY created_at`);
        promotedKid = keys.find((k) => k.state === 'previous')?.kid ?? '';
        await sql(`UPDATE signing_keys SET state = 'next', activated_at = NULL, created_at = now() - interval '2 days' WHERE kid = $1`, [promotedKid]);
        await sql(`UPDATE signing_keys SET created_at = now() - interval '100 days', activated_at = now() - interval '100 days' WHERE state = 'current'`);
      },
    });
    server = deployment.servers[0] as RunningServer;
    // The rotation due at start runs beside serving (it first makes a new RSA key, which can
    // take seconds on a loaded machine): the session below begins once the instance reports it.
    const rotated = new RegExp(`"event":"key_rotated","kid":"${promotedKid}"`);
    await outputWhen(server, (o) => rotated.test(o));
    for (const [name, value] of Object.entries({ 'web client secret': WEB_SECRET, 'service client secret': SERVICE_SECRET, 'burst client secret': BURST_SECRET })) remember(name, value);
    remember('IDP_SECRET', IDP_SECRET);
    remember('TOTP secret', TOTP_SECRET);
    remember('Basic header of web', basic('web', WEB_SECRET).slice('Basic '.length));
    remember('Basic header of burst', basic('burst', BURST_SECRET).slice('Basic '.length));

    // 1. Sign-in with password and TOTP, in a browser.
    const browser = new TracedBrowser(trace);
    const first = authorizeUrl('first');
    const signInPage = await browser.follow(await browser.get(first.url), server.url);
    expect(isSignInPage(signInPage), describePage(signInPage)).toBe(true);
    remember('csrf token', readForm(signInPage.body, signInPage.url).fields.csrf_token);
    for (const [i, value] of browser.cookieValues().entries()) remember(`session cookie before sign-in ${i}`, value);
    remember('password', MIA.password);
    const otpPage = await submit(browser, signInPage, server.url, { username: MIA.username, password: MIA.password });
    expect(isOtpPage(otpPage), describePage(otpPage)).toBe(true);
    await awayFromStepEnd(5);
    const otp = await totp(TOTP_SECRET, nowSeconds());
    remember('TOTP code', otp);
    const signedIn = await submit(browser, otpPage, server.url, { otp });
    expect(kindOf(signedIn), describePage(signedIn)).toBe('redirect');
    did.signInSuccess += 1;
    for (const [i, value] of browser.cookieValues().entries()) remember(`session cookie ${i}`, value);
    const code1 = codeFrom(signedIn, first.state);
    remember('code 1', code1);

    // 2. Code exchange (client_secret_basic), userinfo, refresh, introspection.
    const t1 = await tokenCall({ grant_type: 'authorization_code', code: code1, redirect_uri: WEB_REDIRECT, code_verifier: first.verifier }, { authorization: basic('web', WEB_SECRET) });
    expect(t1.status, JSON.stringify(t1.body)).toBe(200);
    did.codeExchanges += 1;
    for (const k of ['access_token', 'refresh_token', 'id_token']) remember(`first ${k}`, t1.body[k]);
    expect(decodeJwt(String(t1.body.access_token)).header.kid, 'tokens are signed by the key promoted at start').toBe(promotedKid);
    expect((await call('/connect/userinfo', { headers: { authorization: `Bearer ${String(t1.body.access_token)}` } })).status).toBe(200);
    const t2 = await tokenCall({ grant_type: 'refresh_token', refresh_token: String(t1.body.refresh_token) }, { authorization: basic('web', WEB_SECRET) });
    expect(t2.status, JSON.stringify(t2.body)).toBe(200);
    did.refreshes += 1;
    for (const k of ['access_token', 'refresh_token', 'id_token']) remember(`refreshed ${k}`, t2.body[k]);
    const introspected = await call('/connect/introspect', { method: 'POST', form: { token: String(t2.body.access_token) }, headers: { authorization: basic('web', WEB_SECRET) } });
    expect(introspected.body.active).toBe(true);

    // 3. The rotated-out refresh token presented again: reuse (no grace here).
    const reuse = await tokenCall({ grant_type: 'refresh_token', refresh_token: String(t1.body.refresh_token) }, { authorization: basic('web', WEB_SECRET) });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');

    // 4. A second code (no page: signed in), redeemed with client_secret_post, then revoked.
    const second = authorizeUrl('second');
    const code2 = codeFrom(await browser.get(second.url), second.state);
    remember('code 2', code2);
    const t3 = await tokenCall({ grant_type: 'authorization_code', code: code2, redirect_uri: WEB_REDIRECT, code_verifier: second.verifier, client_id: 'web', client_secret: WEB_SECRET });
    expect(t3.status, JSON.stringify(t3.body)).toBe(200);
    did.codeExchanges += 1;
    for (const k of ['access_token', 'refresh_token', 'id_token']) remember(`second ${k}`, t3.body[k]);
    const revoked = await call('/connect/revoke', { method: 'POST', form: { token: String(t3.body.refresh_token), token_type_hint: 'refresh_token' }, headers: { authorization: basic('web', WEB_SECRET) } });
    expect(revoked.status).toBe(200);

    // 5. Client credentials (client_secret_post).
    const cc = await tokenCall({ grant_type: 'client_credentials', scope: 'orders.read', client_id: 'service', client_secret: SERVICE_SECRET });
    expect(cc.status, JSON.stringify(cc.body)).toBe(200);
    did.clientCredentials += 1;
    remember('client credentials access_token', cc.body.access_token);

    // 6. A failed sign-in.
    const other = new TracedBrowser(trace);
    const failing = await other.follow(await other.get(authorizeUrl('failing').url), server.url);
    expect(isSignInPage(failing)).toBe(true);
    remember('wrong password', WRONG_PASSWORD);
    const refusedPage = await submit(other, failing, server.url, { username: ALICE.username, password: WRONG_PASSWORD });
    expect(isSignInPage(refusedPage), describePage(refusedPage)).toBe(true);
    did.signInFailure += 1;

    // 7. Logout with the ID token as hint.
    const logout = await browser.get(`${server.url}/connect/logout?${new URLSearchParams({ id_token_hint: String(t3.body.id_token), post_logout_redirect_uri: WEB_LOGOUT, state: 'bye' })}`);
    expect(logout.status, describePage(logout)).toBe(302);
    expect(logout.location).toBe(`${WEB_LOGOUT}?state=bye`);

    // 8. A burst that trips the token rate limit.
    await roomInRateWindow(5);
    const burst = await Promise.all(Array.from({ length: RATE_LIMIT + 5 }, () => tokenCall({ grant_type: 'client_credentials', scope: 'orders.read' }, { authorization: basic('burst', BURST_SECRET) })));
    did.clientCredentials += burst.filter((r) => r.status === 200).length;
    expect(burst.filter((r) => r.status === 429).length, 'the burst was refused in part').toBeGreaterThan(0);

    // 9. Request ids the service must not take over: none, and one that does not look like an id.
    for (const given of [undefined, 'not an id; with spaces and a quote "']) {
      const res = await fetch(`${server.url}/.well-known/jwks`, given ? { headers: { 'x-request-id': given } } : {});
      trace.requests.push({ id: res.headers.get('x-request-id') ?? '', method: 'GET', path: '/.well-known/jwks', status: res.status, echoed: res.headers.get('x-request-id') });
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }

    // Log lines are written asynchronously: read them once every request's own line is there.
    rawOutput = await outputWhen(server, (o) => trace.requests.every((r) => o.includes(`"reqId":"${r.id}"`)));
    lines = rawOutput.split('\n').filter((l) => l.trim() !== '').map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return { unparsed: l };
      }
    });
  });
  afterAll(async () => {
    await deployment?.stop();
  });

  const audits = (event: string, fields: Record<string, unknown> = {}) =>
    lines.filter((l) => l.event === event && Object.entries(fields).every(([k, v]) => JSON.stringify(l[k]) === JSON.stringify(v)));

  describe('logs', () => {
    it('are JSON lines only', () => {
      expect(lines.length).toBeGreaterThan(trace.requests.length);
      expect(lines.filter((l) => 'unparsed' in l).map((l) => l.unparsed)).toStrictEqual([]);
    });

    it('never carry a secret, code, token, cookie, CSRF token or TOTP code the session used or received', () => {
      expect(secrets.size).toBeGreaterThanOrEqual(25);
      const found: string[] = [];
      for (const [name, value] of secrets) {
        const forms = new Set([value, encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2), JSON.stringify(value).slice(1, -1)]);
        // A JWT's signature alone would do harm too.
        const signature = value.split('.').length === 3 ? value.split('.')[2] : undefined;
        if (signature) forms.add(signature);
        for (const form of forms) if (occurs(rawOutput, form)) found.push(`${name} (${form.slice(0, 12)}...)`);
      }
      expect(found, `secrets in the log:\n${found.join('\n')}`).toStrictEqual([]);
    });

    it('have one request line per request, with the request id the caller gave (echoed in X-Request-Id)', () => {
      const requestLines = lines.filter((l) => l.msg === 'request');
      expect(trace.requests.length).toBeGreaterThan(40);
      for (const r of trace.requests) {
        expect(r.echoed, `X-Request-Id of ${r.method} ${r.path}`).toBe(r.id);
        const own = requestLines.filter((l) => l.reqId === r.id);
        expect(own.length, `request lines for ${r.id} (${r.method} ${r.path} ${r.status})`).toBe(1);
        expect(own[0]).toMatchObject({ method: r.method, status: r.status });
        expect(typeof own[0]?.route).toBe('string');
        expect(typeof own[0]?.ms).toBe('number');
      }
      // Every request line has a request id; routes are templates, never a concrete path or query.
      for (const l of requestLines) {
        expect(typeof l.reqId, JSON.stringify(l)).toBe('string');
        expect(String(l.route)).not.toMatch(/\?|interaction\/[A-Za-z0-9_-]{16,}/);
      }
    });

    it('have audit lines for sign-in (success and failure)', () => {
      const success = audits('sign_in', { result: 'success', amr: ['pwd', 'mfa'] });
      expect(success).toHaveLength(did.signInSuccess);
      expect(typeof success[0]?.user_id).toBe('string');
      expect(audits('sign_in', { result: 'failure' })).toHaveLength(did.signInFailure);
      expect(audits('sign_in', { result: 'failure' })[0]).toMatchObject({ reason: 'invalid_credentials' });
    });

    it('have token_issued audit lines for every grant', () => {
      expect(audits('token_issued', { grant: 'authorization_code', client_id: 'web' })).toHaveLength(did.codeExchanges);
      expect(audits('token_issued', { grant: 'refresh_token', client_id: 'web' })).toHaveLength(did.refreshes);
      expect(did.clientCredentials).toBeGreaterThan(1);
      expect(audits('token_issued', { grant: 'client_credentials' }), 'client credentials tokens are audited too').toHaveLength(did.clientCredentials);
    });

    it('have audit lines for refresh token reuse, revocation, logout and the key rotation', () => {
      expect(audits('refresh_token_reuse_detected', { client_id: 'web' })).toHaveLength(1);
      expect(audits('token_revoked', { client_id: 'web', kind: 'refresh_token' })).toHaveLength(1);
      expect(audits('logout', { client_id: 'web' })).toHaveLength(1);
      expect(audits('key_rotated', { kid: promotedKid })).toHaveLength(1);
      for (const l of lines.filter((x) => typeof x.event === 'string')) expect(l.audit, JSON.stringify(l)).toBe(true);
    });
  });

  describe('/metrics', () => {
    let samples: Sample[];
    let text: string;

    beforeAll(async () => {
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      text = await res.text();
      samples = parseMetrics(text);
    });

    it('counts requests by route, method and status', () => {
      expect(sum(select(samples, 'idp_http_requests_total', { route: '/connect/token', method: 'POST', status: '200' }))).toBe(did.token200);
      expect(sum(select(samples, 'idp_http_requests_total', { route: '/connect/token', method: 'POST', status: '429' }))).toBe(did.token429);
      expect(sum(select(samples, 'idp_http_requests_total', { route: '/connect/token' }))).toBe(did.tokenRequests);
      expect(sum(select(samples, 'idp_http_requests_total', { route: '/interaction/:id/sign-in', method: 'POST' }))).toBe(2);
      expect(sum(select(samples, 'idp_http_requests_total', { route: '/connect/logout', status: '302' }))).toBe(1);
    });

    it('shows the requests in flight: only the scrape itself', () => {
      expect(text).toContain('# TYPE idp_http_requests_in_flight gauge');
      expect(select(samples, 'idp_http_requests_in_flight', {})[0]?.value).toBe(1);
    });

    it('has latency histograms by route', () => {
      const buckets = select(samples, 'idp_http_request_duration_seconds_bucket', { route: '/connect/token' });
      expect(buckets.length).toBeGreaterThan(3);
      const values = buckets.map((b) => b.value);
      expect(values, 'cumulative buckets').toStrictEqual([...values].sort((x, y) => x - y));
      expect(select(samples, 'idp_http_request_duration_seconds_bucket', { route: '/connect/token', le: '+Inf' })[0]?.value).toBe(did.tokenRequests);
      expect(select(samples, 'idp_http_request_duration_seconds_count', { route: '/connect/token' })[0]?.value).toBe(did.tokenRequests);
      expect(select(samples, 'idp_http_request_duration_seconds_sum', { route: '/connect/token' })[0]?.value).toBeGreaterThan(0);
    });

    it('counts tokens issued by grant', () => {
      expect(sum(select(samples, 'idp_tokens_issued_total', { grant: 'authorization_code' }))).toBe(did.codeExchanges);
      expect(sum(select(samples, 'idp_tokens_issued_total', { grant: 'refresh_token' }))).toBe(did.refreshes);
      expect(sum(select(samples, 'idp_tokens_issued_total', { grant: 'client_credentials' })), 'client credentials tokens are counted too').toBe(did.clientCredentials);
    });

    it('counts sign-ins by result and rate-limit refusals', () => {
      expect(sum(select(samples, 'idp_sign_ins_total', { result: 'success' }))).toBe(did.signInSuccess);
      expect(sum(select(samples, 'idp_sign_ins_total', { result: 'failure' }))).toBe(did.signInFailure);
      expect(did.token429).toBeGreaterThan(0);
      expect(sum(select(samples, 'idp_rate_limited_total', { kind: 'token' }))).toBe(did.token429);
    });

    it('carries no secret value either', () => {
      const found = [...secrets].filter(([, value]) => occurs(text, value)).map(([name]) => name);
      expect(found).toStrictEqual([]);
    });
  });
});
