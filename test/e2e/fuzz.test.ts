/**
 * Fuzzing every endpoint from outside, against a spawned server (PostgreSQL when it runs, else
 * the embedded database): random parameters (NUL, lone surrogates, long values, odd unicode,
 * repeated names), methods, content types, Authorization headers and cookies. Whatever arrives,
 * the answer is never a 5xx and never shows internal detail (a stack, a source path, SQL).
 * Bounded: a fixed number of runs per endpoint, so the suite takes seconds.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, readForm } from '../helpers/browser-http.ts';
import { basic, pkce } from '../helpers/oauth.ts';
import { seedWith, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';

const RUNS = 40;
const TIMEOUT_MS = 90_000;
const IDP_SECRET = 'f'.repeat(64);
const WEB_SECRET = 'web-secret-0123456789abcdefghijklmnop';
const BACKEND_SECRET = 'q+Xz/9kLm3Pw+8Rt/Vb2Ny5Hc7Jd0Fs4Ge6Ka1Ub8Y=';
const REDIRECT = 'https://rp.test/cb';
const LOGOUT = 'https://rp.test/bye';
const ALICE = { username: 'alice', password: 'correct horse battery staple' };
const SEED = {
  api_scopes: ['orders.read'],
  clients: [
    {
      client_id: 'web', client_secret: WEB_SECRET, grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'email', 'offline_access'], redirect_uris: [REDIRECT], post_logout_redirect_uris: [LOGOUT],
    },
    { client_id: 'backend', client_secret: BACKEND_SECRET, grant_types: ['client_credentials'], scopes: ['orders.read'] },
  ],
  users: [ALICE],
};

/** What an answer must never show: a stack frame, a source path, an exception's name, SQL or a driver's words. */
const INTERNAL_DETAIL = [
  /\n\s+at /, /\bat (?:async )?[\w$.<>]+ \(/, /node_modules/, /\/src\//, /\.ts:\d+/, /file:\/\//,
  /\b(?:TypeError|ReferenceError|RangeError|SyntaxError)\b/, /\bError: /,
  /\b(?:SELECT|INSERT INTO|DELETE FROM|WHERE)\b/, /\bUPDATE \w+ SET\b/,
  /syntax error|violates|invalid byte sequence|invalid input syntax|duplicate key|kysely|pglite|ioredis|ECONN/i,
];

/** Values chosen to hurt: NUL raw and encoded, lone surrogates, injections, number edges. */
const NASTY = [
  '\u0000', 'a\u0000b', '%00', '\uD800', '\uDFFF', '\uFFFE', '\u202E', '😀', 'Å', '\r\n', ' ', '\t', '=', '&', '+', '%', '%zz', '%%',
  "' OR '1'='1", '"; DROP TABLE clients; --', '../../../etc/passwd', '<script>alert(1)</script>', '${7*7}', '{{7*7}}',
  'null', 'undefined', '[]', '{}', '__proto__', 'constructor', 'NaN', '-1', '0', '1e309', '99999999999999999999',
  'javascript:alert(1)', 'https://evil.example/cb', REDIRECT, 'openid', 'S256', 'plain', 'code', 'web', 'backend',
];

const nasty = fc.constantFrom(...NASTY);
const value: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: nasty },
  { weight: 2, arbitrary: fc.tuple(nasty, fc.string({ maxLength: 8 }), nasty).map(([a, b, c]) => `${a}${b}${c}`) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 500, maxLength: 2500 }) },
);

/** A header value fetch can send (latin1, no CR, LF or NUL): other characters become '?'. */
const headerSafe = (s: string) => s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');

/** Basic as RFC 6749 §2.3.1 wants it, or raw; encodeURIComponent refuses lone surrogates. */
function basicOf(id: string, secret: string, encode: boolean): string {
  if (!encode) return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  try {
    return basic(id, secret);
  } catch {
    return `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  }
}

type Pairs = Array<[string, string]>;

/** A few parameters of random names, or of known ones again. */
function strayParams(names: string[]): fc.Arbitrary<Pairs> {
  const name = names.length > 0 ? fc.oneof(fc.constantFrom(...names), fc.string({ unit: 'binary', maxLength: 12 })) : fc.string({ unit: 'binary', maxLength: 12 });
  return fc.array(fc.tuple(name, value), { maxLength: 3 });
}

/**
 * Parameters: each known name absent, valid (from `base`) or hostile; plus a few random names,
 * which may repeat a known one (RFC 6749 §3.1: a repeated parameter is refused).
 */
function params(names: string[], base: Record<string, string> = {}): fc.Arbitrary<Pairs> {
  const known = Object.fromEntries(names.map((name) => {
    const valid = base[name];
    return [name, fc.option(valid === undefined ? value : fc.oneof(fc.constant(valid), value), { nil: undefined, freq: 3 })];
  }));
  return fc.tuple(fc.record(known), strayParams(names)).map(([k, e]) => [...Object.entries(k).flatMap(([n, v]) => (v === undefined ? [] : [[n, v] as [string, string]])), ...e]);
}

const CONTENT_TYPES = [
  'application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'application/x-www-form-urlencoded; charset=iso-8859-1',
  'application/x-www-form-urlencoded; charset=utf-16', 'APPLICATION/X-WWW-FORM-URLENCODED', 'application/json', 'text/plain',
  'multipart/form-data; boundary=xyz', 'application/xml', 'x/y;;;=', 'application/x-www-form-urlencoded, application/json',
];

interface Shot {
  method: string;
  path: string;
  query: Pairs;
  body: { type: string | undefined; text: string } | undefined;
  headers: Record<string, string>;
}

/** A body for these parameters: form-encoded (usually), as JSON, or raw noise, under any content type. */
function body(pairs: Pairs): fc.Arbitrary<Shot['body']> {
  const type = fc.oneof({ weight: 6, arbitrary: fc.constant(CONTENT_TYPES[0]) }, { weight: 4, arbitrary: fc.constantFrom(...CONTENT_TYPES) }, { weight: 1, arbitrary: fc.constant(undefined) });
  const text = fc.oneof(
    { weight: 6, arbitrary: fc.constant(new URLSearchParams(pairs).toString()) },
    { weight: 1, arbitrary: fc.constant(JSON.stringify(Object.fromEntries(pairs))) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
    { weight: 1, arbitrary: fc.constantFrom('a=%00', 'a=%zz', '=&=&', 'a'.repeat(70_000), '%', 'grant_type=client_credentials&grant_type=client_credentials') },
  );
  return fc.record({ type, text });
}

/** The common headers: Authorization of every kind, cookies, an origin, a request id. */
function headers(authorizations: fc.Arbitrary<string | undefined>, cookie: fc.Arbitrary<string | undefined>): fc.Arbitrary<Record<string, string>> {
  return fc.record({
    authorization: authorizations,
    cookie,
    origin: fc.option(fc.oneof(fc.constantFrom('https://rp.test', 'null', 'https://evil.example'), value.map(headerSafe)), { nil: undefined, freq: 4 }),
    'x-request-id': fc.option(value.map(headerSafe), { nil: undefined, freq: 4 }),
    accept: fc.option(fc.constantFrom('application/json', 'text/html', '*/*', 'image/png'), { nil: undefined }),
  }).map((h) => Object.fromEntries(Object.entries(h).filter((e): e is [string, string] => e[1] !== undefined)));
}

function authorization(validBasic: string[], validBearer: () => string): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    fc.constant(undefined),
    fc.constantFrom(...validBasic),
    fc.constant(null).map(() => `Bearer ${validBearer()}`),
    fc.tuple(value, value, fc.boolean()).map(([id, secret, encode]) => basicOf(id, secret, encode)),
    fc.tuple(nasty, nasty, fc.boolean()).map(([id, secret, encode]) => basicOf(id, secret, encode)),
    fc.constantFrom('Basic', 'Basic ', 'Basic ADoA', 'Basic ====', 'Basic Og==', 'Bearer', 'Bearer ', 'Digest a=b', 'Negotiate x'),
    value.map((v) => headerSafe(`Bearer ${v}`)),
    fc.string({ maxLength: 80 }),
  );
}

/** A method, weighted to the endpoint's own; GET and HEAD carry no body. */
function shot(path: fc.Arbitrary<string>, methods: string[], names: string[], base: Record<string, string>, head: fc.Arbitrary<Record<string, string>>): fc.Arbitrary<Shot> {
  const method = fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...methods) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS') });
  return fc.tuple(path, method, params(names, base), head).chain(([p, m, pairs, h]) => {
    const hasBody = m !== 'GET' && m !== 'HEAD';
    return fc.tuple(hasBody ? body(pairs) : fc.constant(undefined), hasBody ? strayParams(names) : fc.constant(pairs)).map(([b, query]) => ({ method: m, path: p, query, body: b, headers: h }));
  });
}

describe('fuzzing every endpoint', () => {
  let server: RunningServer | undefined;
  let db: TestDatabase | undefined;
  const dataDir = tempDir('idp-fuzz-');
  let base = '';
  let accessToken = '';
  let interaction = { path: '/interaction/none', csrf: '', cookie: '' };
  const answered = new Map<number, number>();

  beforeAll(async () => {
    db = postgresAvailable ? await createMigratedTestDatabase() : undefined;
    const env = {
      ...(db ? { DATABASE_URL: db.url } : { IDP_DATA_DIR: dataDir.path }),
      IDP_SECRET,
      // Limits would turn most requests into 429 before they reach anything worth fuzzing.
      IDP_TOKEN_RATE_LIMIT: '10000000', IDP_LOGIN_MAX_FAILURES: '1000', IDP_LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000',
      IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000000', IDP_LOGIN_MAX_ATTEMPTS_PER_INTERACTION: '1000',
    };
    await seedWith(SEED, env);
    server = await startServer(env);
    base = server.url;
    const token = await fetch(`${base}/connect/token`, {
      method: 'POST',
      headers: { authorization: basic('backend', BACKEND_SECRET), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&scope=orders.read',
    });
    accessToken = String(((await token.json()) as Record<string, unknown>).access_token);
    const browser = new Browser();
    const query = new URLSearchParams({ client_id: 'web', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 's' });
    const page = await browser.follow(await browser.get(`${base}/connect/authorize?${query.toString()}`), base);
    const form = readForm(page.body, page.url);
    interaction = {
      path: new URL(form.action).pathname.replace(/\/sign-in$/, ''),
      csrf: form.fields.csrf_token ?? '',
      cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    };
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    dataDir.remove();
  });

  async function fire(s: Shot): Promise<void> {
    const url = new URL(`${base}${s.path}`);
    for (const [name, v] of s.query) url.searchParams.append(name, v);
    const headersOut = new Headers(s.headers);
    if (s.body?.type !== undefined) headersOut.set('content-type', s.body.type);
    const res = await fetch(url, { method: s.method, headers: headersOut, body: s.body?.text, redirect: 'manual' });
    const text = await res.text();
    answered.set(res.status, (answered.get(res.status) ?? 0) + 1);
    const shown = `${s.method} ${url.pathname}${url.search.slice(0, 200)} -> ${res.status} ${text.slice(0, 300)}`;
    expect(res.status, shown).toBeLessThan(500);
    for (const pattern of INTERNAL_DETAIL) expect(text, `${shown}\nshows ${String(pattern)}`).not.toMatch(pattern);
  }

  const noCookie = fc.option(value.map(headerSafe), { nil: undefined, freq: 4 });
  const clientAuth = () => authorization([basic('backend', BACKEND_SECRET), basic('web', WEB_SECRET), basicOf('backend', BACKEND_SECRET, false)], () => accessToken);
  const run = (arbitrary: () => fc.Arbitrary<Shot>) => fc.assert(fc.asyncProperty(arbitrary(), fire), { numRuns: RUNS, endOnFailure: true });

  it('the metadata, keys, health, metrics and asset endpoints', async () => {
    const path = fc.constantFrom('/.well-known/openid-configuration', '/.well-known/jwks', '/healthz', '/readyz', '/metrics', '/assets/idp.css', '/signin/oidc/callback', '/signin/oidc/signed-out');
    await run(() => shot(path, ['GET', 'HEAD'], ['code', 'state', 'iss', 'error'], {}, headers(clientAuth(), noCookie)));
  }, TIMEOUT_MS);

  it('the authorization endpoint', async () => {
    const valid = { client_id: 'web', response_type: 'code', redirect_uri: REDIRECT, scope: 'openid profile', code_challenge: pkce().challenge, code_challenge_method: 'S256', state: 'xyz', nonce: 'n' };
    const names = [...Object.keys(valid), 'prompt', 'max_age', 'login_hint', 'response_mode', 'request', 'request_uri', 'id_token_hint', 'claims', 'ui_locales', 'acr_values'];
    await run(() => shot(fc.constant('/connect/authorize'), ['GET', 'POST'], names, valid, headers(fc.constant(undefined), noCookie)));
  }, TIMEOUT_MS);

  it('the token endpoint', async () => {
    const names = ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'client_id', 'client_secret'];
    const valid = { grant_type: 'client_credentials', scope: 'orders.read', redirect_uri: REDIRECT, client_id: 'backend' };
    await run(() => shot(fc.constant('/connect/token'), ['POST'], names, valid, headers(clientAuth(), noCookie)));
  }, TIMEOUT_MS);

  it('the introspection and revocation endpoints', async () => {
    const names = ['token', 'token_type_hint', 'client_id', 'client_secret'];
    const valid = () => ({ token: accessToken, token_type_hint: 'access_token', client_id: 'backend' });
    await run(() => shot(fc.constantFrom('/connect/introspect', '/connect/revoke'), ['POST'], names, valid(), headers(clientAuth(), noCookie)));
  }, TIMEOUT_MS);

  it('the userinfo endpoint', async () => {
    await run(() => shot(fc.constant('/connect/userinfo'), ['GET', 'POST'], ['access_token', 'scope'], {}, headers(clientAuth(), noCookie)));
  }, TIMEOUT_MS);

  it('the logout endpoint', async () => {
    const valid = { client_id: 'web', post_logout_redirect_uri: LOGOUT, state: 's' };
    const names = [...Object.keys(valid), 'id_token_hint', 'logout_hint', 'ui_locales', 'csrf_token'];
    await run(() => shot(fc.constant('/connect/logout'), ['GET', 'POST'], names, valid, headers(fc.constant(undefined), noCookie)));
  }, TIMEOUT_MS);

  it('the sign-in pages and their forms, with the real interaction and cookie or with made-up ones', async () => {
    const step = fc.constantFrom('', '/sign-in', '/otp', '/recovery', '/enrol', '/recovery-codes', '/password', '/consent');
    const id = fc.oneof({ weight: 3, arbitrary: fc.constant(interaction.path) }, { weight: 1, arbitrary: value.map((v) => `/interaction/${encodeURIComponent(v.replace(/[\uD800-\uDFFF]/g, '?'))}`) });
    const path = fc.tuple(id, step).map(([i, s]) => `${i}${s}`);
    const cookie = fc.oneof({ weight: 3, arbitrary: fc.constant(interaction.cookie) }, { weight: 1, arbitrary: noCookie });
    const names = ['csrf_token', 'username', 'password', 'otp', 'recovery_code', 'new_password', 'confirm_password', 'decision'];
    await run(() => shot(path, ['GET', 'POST'], names, { csrf_token: interaction.csrf, username: ALICE.username, decision: 'allow' }, headers(fc.constant(undefined), cookie)));
  }, TIMEOUT_MS);

  it('the forgot-password pages and their forms, with a real recovery and cookie or with made-up ones', async () => {
    const browser = new Browser();
    browser.cookies.set(...(interaction.cookie.split('=') as [string, string]));
    const interactionId = interaction.path.replace('/interaction/', '');
    const request = await browser.get(`${base}/account/recover?interaction=${encodeURIComponent(interactionId)}`);
    const asked = readForm(request.body, request.url);
    const codeForm = await browser.post(asked.action, { ...asked.fields, identifier: ALICE.username });
    const { fields } = readForm(codeForm.body, codeForm.url);
    const path = fc.constantFrom('/account/recover', '/account/recover/code');
    const cookie = fc.oneof({ weight: 3, arbitrary: fc.constant(interaction.cookie) }, { weight: 1, arbitrary: noCookie });
    const names = ['csrf_token', 'identifier', 'interaction', 'recovery', 'code'];
    const valid = { csrf_token: fields.csrf_token ?? '', interaction: interactionId, recovery: fields.recovery ?? '', identifier: ALICE.username, code: '12345678' };
    await run(() => shot(path, ['GET', 'POST'], names, valid, headers(fc.constant(undefined), cookie)));
  });

  it('reached the service, not only its parser: most answers came from a route', () => {
    const total = [...answered.values()].reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThanOrEqual(RUNS * 7);
    const ok = [...answered.entries()].filter(([status]) => status < 300).reduce((a, [, n]) => a + n, 0);
    expect(ok, JSON.stringify(Object.fromEntries(answered))).toBeGreaterThan(0);
  });
});
