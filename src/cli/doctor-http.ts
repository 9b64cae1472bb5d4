/**
 * The checks `idp doctor` makes through the public URL, as a relying party sees the service:
 * discovery, the issuer and endpoint URLs, the key set and HSTS.
 */
import { describeError, fail, get, isOutcome, ok, openOrSkip, skip, warn, type DoctorContext, type Outcome } from './doctor-context.ts';
import { serviceFactsOf } from './doctor-service.ts';

/** Every endpoint of the discovery document lives under `{base_url}/` (README, Endpoints), so a proxy needs no path rewriting. */
const ENDPOINTS = [
  'authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'introspection_endpoint',
  'revocation_endpoint', 'end_session_endpoint', 'jwks_uri',
] as const;

const BASE_URL_FIX = (url: string) => `set IDP_BASE_URL to the public URL the browser uses (${url})`;

export async function checkDiscovery(context: DoctorContext): Promise<Outcome> {
  const answer = await context.discovery();
  if (!answer.ok) return fail(answer.detail, answer.fix);
  return ok(`${context.url}/.well-known/openid-configuration answered 200 JSON`);
}

/**
 * OIDC Discovery §4.3: the issuer must be identical to the URL the document was fetched under.
 * A base URL that disagrees with where the service is reached is the classic proxy mistake.
 */
export async function checkIssuer(context: DoctorContext): Promise<Outcome> {
  const answer = await context.discovery();
  const expected = `${context.url}/`;
  if (!answer.ok) {
    // A service that answers but refuses (as it does a request for a host not its own) leaves
    // the configured issuer to compare; where nothing answers, the discovery check says enough.
    if (!answer.answered || context.config.issuer === expected) return skip('no discovery document');
    return fail(`issuer is ${JSON.stringify(context.config.issuer)} (IDP_BASE_URL), but the service is reached at ${expected}`, BASE_URL_FIX(context.url));
  }
  const { document } = answer;
  if (document.issuer !== expected) {
    return fail(`issuer is ${JSON.stringify(document.issuer)}, but the service is reached at ${expected}`, BASE_URL_FIX(context.url));
  }
  const outside = ENDPOINTS.filter((field) => {
    const value = document[field];
    return typeof value !== 'string' || !value.startsWith(expected);
  });
  if (outside.length > 0) {
    const seen = outside.map((field) => `${field} ${JSON.stringify(document[field] ?? null)}`).join(', ');
    return fail(`${seen}: not under ${expected}`, `${BASE_URL_FIX(context.url)}, and let the proxy pass the document unchanged`);
  }
  return ok(`${expected}, with all ${ENDPOINTS.length} endpoint URLs under it`);
}

/** The key set answers with keys, and the database's current signing key is among them. */
export async function checkJwks(context: DoctorContext): Promise<Outcome> {
  const answer = await context.discovery();
  if (!answer.ok) return skip('no discovery document');
  const uri = answer.document.jwks_uri;
  if (typeof uri !== 'string') return fail('the discovery document has no jwks_uri', BASE_URL_FIX(context.url));
  const published = await fetchKids(context, uri);
  if (isOutcome(published)) return published;
  const durable = await openOrSkip(context);
  if (isOutcome(durable)) return skip(`${published.length} key(s) at ${uri}; the current signing key not compared: the database does not answer`);
  // The key records, not createKeyManager: listing needs no master secret (which the command
  // line would otherwise generate into the data directory when none is configured).
  const current = (await durable.signingKeys.list()).find((key) => key.state === 'current');
  if (!current) return fail('the database has no current signing key', 'start the service once, or run idp keys rotate');
  if (!published.includes(current.kid)) {
    return fail(
      `the current signing key ${current.kid} is not in ${uri} (published: ${published.join(', ')})`,
      'every instance must use this database (DATABASE_URL); purge any cache in front of the jwks_uri',
    );
  }
  return ok(`${published.length} key(s) at ${uri}, the current signing key ${current.kid} among them`);
}

/** Plain http is for development, unless the service runs in production under IDP_ALLOW_HTTP=1 (as it says, or this environment). */
async function plainHttp(context: DoctorContext): Promise<Outcome> {
  const facts = await serviceFactsOf(context);
  const allowHttp = facts ? facts.allow_http : context.config.production && context.config.baseUrl.startsWith('http:');
  if (!allowHttp) return skip('plain http URL: HSTS and Secure cookies are for https (development only)');
  return warn(
    'plain http URL in production (IDP_ALLOW_HTTP=1): no HSTS, session cookies not Secure, sessions and codes cross the network readable',
    'serve the public URL over https (TLS may end at a proxy) and set IDP_BASE_URL to it; keep IDP_ALLOW_HTTP for a network no one else can read',
  );
}

async function fetchKids(context: DoctorContext, uri: string): Promise<string[] | Outcome> {
  const fix = uri.startsWith(`${context.url}/`) ? 'route the public URL to the service (proxy rules)' : BASE_URL_FIX(context.url);
  let body: unknown;
  try {
    const response = await get(context, uri);
    // A 500 is the service's own failure, not the proxy's: most often a signing key that the
    // secrets in force do not open (an instance started with another IDP_SECRET made it).
    if (response.status === 500) return fail(`${uri} answered 500`, 'see the secret check below and the service\'s log (a signing key IDP_SECRET does not open answers 500)');
    if (response.status !== 200) return fail(`${uri} answered ${response.status}`, fix);
    body = await response.json();
  } catch (error) {
    return fail(`${uri} did not answer a key set: ${describeError(error)}`, fix);
  }
  const keys = (body as { keys?: unknown } | null)?.keys;
  const kids = Array.isArray(keys) ? keys.map((key) => (key as { kid?: unknown } | null)?.kid).filter((kid) => typeof kid === 'string') : [];
  if (kids.length === 0) return fail(`${uri} answered no keys`, 'start the service once, or run idp keys rotate');
  return kids;
}

/** RFC 6797: under https the service asks browsers never to use plain http for it again. */
export async function checkHsts(context: DoctorContext): Promise<Outcome> {
  if (!context.url.startsWith('https:')) return plainHttp(context);
  const answer = await context.discovery();
  if (!answer.ok) return skip('no discovery document');
  const hsts = answer.response.headers.get('strict-transport-security');
  if (hsts) return ok(`Strict-Transport-Security: ${hsts}`);
  const fix = context.config.baseUrl.startsWith('https:')
    ? 'let the proxy pass the Strict-Transport-Security header through'
    : 'set IDP_BASE_URL to the https public URL: the service sends HSTS only under an https base URL';
  return fail('the discovery answer has no Strict-Transport-Security header', fix);
}
