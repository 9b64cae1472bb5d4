/**
 * `idp doctor`'s cookie check: starts an authorization as a browser would (an enabled client
 * with the code grant, an S256 challenge of a random verifier) and reads the session cookie the
 * service sets: HttpOnly, SameSite=Lax, and Secure with the `__Host-` name exactly under https.
 */
import { SERVICE_SCOPES } from '../scopes.ts';
import type { ClientRecord } from '../store/records.ts';
import { randomToken } from '../tokens/opaque.ts';
import { s256Challenge } from '../tokens/pkce.ts';
import { describeError, fail, get, isOutcome, ok, openOrSkip, skip, type DoctorContext, type Outcome } from './doctor-context.ts';

const SESSION_COOKIE = /^(?:__Host-)?idp_session=/;

export async function checkCookies(context: DoctorContext): Promise<Outcome> {
  if (!(await context.discovery()).ok) return skip('no discovery document (see the discovery check)');
  const durable = await openOrSkip(context);
  if (isOutcome(durable)) return durable;
  const client = (await durable.clients.list()).find(
    (c) => c.enabled && c.grantTypes.includes('authorization_code') && c.redirectUris.length > 0,
  );
  if (!client) return skip('no enabled client with the authorization_code grant and a redirect URI to start a sign-in with');
  let response: Response;
  try {
    response = await get(context, authorizeUrl(context.url, client));
  } catch (error) {
    return fail(`GET ${context.url}/connect/authorize: ${describeError(error)}`, 'route the public URL to the service (proxy rules)');
  }
  const cookie = response.headers.getSetCookie().find((c) => SESSION_COOKIE.test(c));
  if (!cookie) {
    const fix = response.status >= 500 ? 'see the service log, and the database and store checks' : 'let the proxy pass Set-Cookie through';
    return fail(`GET /connect/authorize (client ${client.clientId}) answered ${response.status} without a session cookie`, fix);
  }
  const secure = context.url.startsWith('https:');
  const problems = cookieProblems(cookie, secure);
  const name = cookie.slice(0, cookie.indexOf('='));
  if (problems.length > 0) return fail(`session cookie ${name}: ${problems.join(', ')}`, cookieFix(context, secure));
  return ok(`${name}: HttpOnly, SameSite=Lax, ${secure ? 'Secure' : 'not Secure (http)'} (client ${client.clientId})`);
}

function authorizeUrl(base: string, client: ClientRecord): string {
  const scope = client.scopes.includes('openid') ? 'openid' : (client.scopes.find((s) => !SERVICE_SCOPES.has(s)) ?? 'openid');
  const query = new URLSearchParams({
    client_id: client.clientId,
    response_type: 'code',
    redirect_uri: client.redirectUris[0] ?? '',
    scope,
    state: randomToken(16),
    code_challenge: s256Challenge(randomToken()),
    code_challenge_method: 'S256',
  });
  return `${base}/connect/authorize?${query}`;
}

/** RFC 6265bis §4.1.3.2: a `__Host-` cookie is Secure, has Path=/ and no Domain. */
function cookieProblems(cookie: string, secure: boolean): string[] {
  const [pair = '', ...parts] = cookie.split(';').map((p) => p.trim());
  const attributes = new Map(parts.map((p) => {
    const eq = p.indexOf('=');
    return eq < 0 ? [p.toLowerCase(), ''] : [p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim()];
  }));
  const problems: string[] = [];
  const hostPrefixed = pair.startsWith('__Host-');
  if (secure !== hostPrefixed) problems.push(secure ? 'not named __Host-idp_session' : 'named __Host- over http');
  if (!attributes.has('httponly')) problems.push('not HttpOnly');
  if (attributes.get('samesite')?.toLowerCase() !== 'lax') problems.push(`SameSite=${attributes.get('samesite') ?? '(none)'} instead of Lax`);
  if (secure && !attributes.has('secure')) problems.push('not Secure');
  if (!secure && attributes.has('secure')) problems.push('Secure over http (the browser will not send it back)');
  if (hostPrefixed && (attributes.get('path') !== '/' || attributes.has('domain'))) problems.push('__Host- without Path=/ or with a Domain');
  return problems;
}

function cookieFix(context: DoctorContext, secure: boolean): string {
  if (secure && !context.config.baseUrl.startsWith('https:')) {
    return 'set IDP_BASE_URL to the https public URL: the service marks cookies Secure only under an https base URL';
  }
  if (!secure && context.config.baseUrl.startsWith('https:')) return 'reach the service through its https URL (--url)';
  return 'let the proxy pass Set-Cookie through unchanged';
}
