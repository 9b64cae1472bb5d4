/**
 * GET and POST /connect/logout (OpenID Connect RP-Initiated Logout 1.0). Signs the browser out,
 * revokes the identified client's tokens for the browser's user, then redirects to a registered
 * post_logout_redirect_uri or shows the signed-out page. Errors are always our own page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { epochSeconds, type Clock } from '../clock.ts';
import { OAuthError } from '../errors.ts';
import type { SessionStore } from '../sessions/browser-session.ts';
import { isValidSessionCsrfToken, sessionCsrfToken } from '../sessions/csrf.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import type { AccessTokenRepository, ClientRecord, RefreshTokenRepository, UserRecord, UserRepository } from '../store/types.ts';
import { verifyJwt, type TokenClaims } from '../tokens/jwt.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { revokedFamilyTokens, revokedTokens, type RevocationList } from '../tokens/revocation.ts';
import type { RequestAudit } from './shared/audit.ts';
import type { Keyring } from '../tokens/secret-box.ts';
import { withQuery } from './shared/authorization-response.ts';
import { clearSessionCookie, readSessionCookie } from './shared/cookies.ts';
import { formActionSource, renderPage, type PageContext } from './shared/pages.ts';
import { singleValued, type Params } from './shared/params.ts';

export interface LogoutRouteOptions {
  issuer: string;
  page: PageContext;
  secureCookies: boolean;
  csrfKey: Keyring;
  clock: Clock;
  keys: KeyManager;
  clients: ClientsCache;
  users: Pick<UserRepository, 'getById'>;
  sessions: SessionStore;
  refreshTokens: RefreshTokenRepository;
  accessTokens: AccessTokenRepository;
  revocations: RevocationList;
  audit: RequestAudit;
  /** With an upstream provider: its end-session URL for this user, carrying where to return. */
  continueUpstream?: (idToken: string, trip: { redirectUri: string | undefined; state: string | undefined }) => Promise<string | undefined>;
}

const refused = (code: 'invalid_request' | 'unauthorized_client', description: string) => new OAuthError(code, description, { redirectable: false });
const CSRF_PURPOSE = 'logout';

/** How the confirmation names the signed-in account: the name people know, and the username. */
function accountName(user: UserRecord): string {
  return user.name && user.name !== user.username ? `${user.name} (${user.username})` : user.username;
}

/**
 * A link back to the client, when one is known: the origin of its first web redirect URI (or
 * post-logout URI). Both are registered by an administrator, so the link goes nowhere else.
 */
function backToApplication(client: ClientRecord | undefined): { applicationUrl?: string; clientName?: string } {
  if (!client) return {};
  const origin = [...client.redirectUris, ...client.postLogoutRedirectUris].map(formActionSource).find((source) => /^https?:\/\//.test(source));
  return origin ? { applicationUrl: `${origin}/`, clientName: client.displayName || client.clientId } : {};
}

interface LogoutRequest {
  hint: TokenClaims | undefined;
  client: ClientRecord | undefined;
  redirectUri: string | undefined;
}

export async function logoutRoutes(app: FastifyInstance, options: LogoutRouteOptions): Promise<void> {
  const { issuer, page, clock, keys, clients, users, sessions } = options;

  /** Every check of the request; any failure is an error page, never a redirect. */
  async function validate(params: Params): Promise<LogoutRequest> {
    let hint: TokenClaims | undefined;
    if (params.id_token_hint !== undefined) {
      // An expired hint still says who it was for; a hint signed by a key not yet retired verifies.
      hint = await verifyJwt(keys, 'id', params.id_token_hint, { issuer, now: epochSeconds(clock), allowExpired: true });
      if (!hint) throw refused('invalid_request', 'The id_token_hint was not issued by this service.');
    }
    const hintClient = Array.isArray(hint?.aud) ? hint.aud[0] : hint?.aud;
    if (params.client_id !== undefined && hintClient !== undefined && params.client_id !== hintClient) {
      throw refused('invalid_request', 'The client_id does not match the id_token_hint.');
    }
    const clientId = params.client_id ?? hintClient;
    const redirectUri = params.post_logout_redirect_uri;
    if (redirectUri !== undefined && clientId === undefined) {
      throw refused('invalid_request', 'A post_logout_redirect_uri needs an id_token_hint or a client_id.');
    }
    const client = clientId !== undefined ? await clients.get(clientId) : undefined;
    if (clientId !== undefined && !client) throw refused('invalid_request', 'The client is unknown.');
    if (client && !client.enabled) throw refused('unauthorized_client', 'The client is disabled.');
    if (redirectUri !== undefined && !client?.postLogoutRedirectUris.includes(redirectUri)) {
      throw refused('invalid_request', 'The post_logout_redirect_uri is not registered for this client.');
    }
    return { hint, client, redirectUri };
  }

  async function revokeClientTokens(user: UserRecord | undefined, client: ClientRecord | undefined): Promise<void> {
    if (!user || !client) return;
    const now = new Date(clock());
    const [inFamilies, onTheirOwn] = await Promise.all([
      options.refreshTokens.revokeForUserAndClient(user.id, client.clientId, 'end session', now),
      options.accessTokens.takeLive(user.id, client.clientId, now),
    ]);
    await options.revocations.revoke([...revokedFamilyTokens(inFamilies), ...revokedTokens(onTheirOwn)]);
  }

  async function logout(request: FastifyRequest, reply: FastifyReply, input: unknown): Promise<unknown> {
    const params = singleValued(input);
    const { hint, client, redirectUri } = await validate(params);
    const loaded = await sessions.load(readSessionCookie(request, options.secureCookies));
    const signedIn = loaded?.session.userId ? await users.getById(loaded.session.userId) : undefined;
    // RP-Initiated Logout §2: ask the user when the hint is missing or names someone else.
    const confirmed = loaded !== undefined && isValidSessionCsrfToken(options.csrfKey, loaded.key, CSRF_PURPOSE, params.csrf_token);
    // Cancel on the confirmation (its CSRF token proves it was shown): nothing changes.
    if (signedIn && confirmed && params.cancel !== undefined) {
      return renderPage(reply, page, 'signed-out', { stillSignedIn: true, ...backToApplication(client) });
    }
    if (signedIn && loaded && !confirmed && hint?.sub !== signedIn.subject) {
      const fields = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state']
        .filter((name) => params[name] !== undefined)
        .map((name) => ({ name, value: params[name] as string }));
      return renderPage(reply, page, 'logout-confirm', {
        action: `${page.basePath}/connect/logout`,
        accountName: accountName(signedIn),
        csrfToken: sessionCsrfToken(options.csrfKey, loaded.key, CSRF_PURPOSE),
        fields,
        clientName: client ? client.displayName || client.clientId : undefined,
      });
    }
    // Only the browser's own user's tokens end: an ID token (in logs, in browser history) is no
    // credential, so a hint alone, with no session, ends nothing. After the confirmation, the
    // session's user signs out, not the one the hint names.
    const user = signedIn;
    await revokeClientTokens(user, client);
    if (loaded) await sessions.destroy(loaded.key);
    clearSessionCookie(reply, options.secureCookies);
    options.audit(request, 'logout', { user_id: user?.id ?? null, client_id: client?.clientId ?? null });
    // The user came from an upstream provider: sign-out continues there, then comes back.
    const upstreamUrl = loaded?.session.upstreamIdToken !== undefined && options.continueUpstream
      ? await options.continueUpstream(loaded.session.upstreamIdToken, { redirectUri, state: params.state })
      : undefined;
    if (upstreamUrl) return reply.header('cache-control', 'no-store').redirect(upstreamUrl, 302);
    if (redirectUri !== undefined) {
      return reply.header('cache-control', 'no-store').redirect(withQuery(redirectUri, params.state !== undefined ? { state: params.state } : {}), 302);
    }
    return renderPage(reply, page, 'signed-out', backToApplication(client));
  }

  const config = { page: true };
  app.get('/connect/logout', { config }, (request, reply) => logout(request, reply, request.query));
  app.post('/connect/logout', { config }, (request, reply) => logout(request, reply, request.body));
}
