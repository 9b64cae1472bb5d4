/**
 * OpenID Connect RP-Initiated Logout 1.0: validates the logout request, asks the user to
 * confirm when it is not clearly theirs, and signs the browser out: its session ends, and the
 * identified client's tokens for the browser's user are revoked. Returns what the route shows
 * or where it redirects; every refusal is an OAuthError that never redirects.
 */
import { epochSeconds, type Clock } from '../clock.ts';
import { OAuthError } from '../errors.ts';
import type { SessionStore } from './browser-session.ts';
import { isValidSessionCsrfToken, sessionCsrfToken } from './csrf.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import type { ClientRecord, UserRecord } from '../store/records.ts';
import type { AccessTokenRepository, RefreshTokenRepository, UserRepository } from '../store/types.ts';
import { verifyJwt, type TokenClaims } from '../tokens/jwt.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { revokedFamilyTokens, revokedTokens, type RevocationList } from '../tokens/revocation-list.ts';
import type { Keyring } from '../tokens/secret-box.ts';
import type { Audit } from '../events/record.ts';
import type { Params } from '../protocol/params.ts';

export interface EndSessionDeps {
  issuer: string;
  clock: Clock;
  keys: KeyManager;
  csrfKey: Buffer | Keyring;
  clients: Pick<ClientsCache, 'get'>;
  users: Pick<UserRepository, 'getById'>;
  sessions: Pick<SessionStore, 'load' | 'destroy'>;
  refreshTokens: Pick<RefreshTokenRepository, 'revokeForUserAndClient'>;
  accessTokens: Pick<AccessTokenRepository, 'takeLive'>;
  revocations: Pick<RevocationList, 'revoke'>;
  /** With an upstream provider: its end-session URL for this user, carrying where to return. */
  continueUpstream?: (idToken: string, trip: { redirectUri: string | undefined; state: string | undefined }) => Promise<string | undefined>;
}

export interface EndSessionRequest {
  params: Params;
  /** The browser's session cookie, if it sent one. */
  sessionId: string | undefined;
  /** Told once the browser's session has ended (the route clears the cookie), before sign-out continues upstream. */
  signedOut(): void;
  audit: Audit;
}

export type EndSessionOutcome =
  /** RP-Initiated Logout §2: the user is asked, with the request's own fields to send again. */
  | { kind: 'confirm'; accountName: string; csrfToken: string; fields: Array<{ name: string; value: string }>; client: ClientRecord | undefined }
  /** The signed-out page; `stillSignedIn` after the user cancelled. */
  | { kind: 'signed-out'; stillSignedIn: boolean; client: ClientRecord | undefined }
  /** A redirect to `location` with `query` appended (to a registered URI as registered). */
  | { kind: 'redirect'; location: string; query: Record<string, string> };

interface LogoutRequest {
  hint: TokenClaims | undefined;
  client: ClientRecord | undefined;
  redirectUri: string | undefined;
}

const refused = (code: 'invalid_request' | 'unauthorized_client', description: string) => new OAuthError(code, description, { redirectable: false });
const CSRF_PURPOSE = 'logout';
/** The parameters a confirmation sends again. */
const CONFIRMED_FIELDS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state'];

/** How the confirmation names the signed-in account: the name people know, and the username. */
function accountLabel(user: UserRecord): string {
  return user.name && user.name !== user.username ? `${user.name} (${user.username})` : user.username;
}

/** Every check of the request; any failure is an error page, never a redirect. */
async function validateLogoutRequest(params: Params, deps: Pick<EndSessionDeps, 'issuer' | 'clock' | 'keys' | 'clients'>): Promise<LogoutRequest> {
  let hint: TokenClaims | undefined;
  if (params.id_token_hint !== undefined) {
    // An expired hint still says who it was for; a hint signed by a key not yet retired verifies.
    hint = await verifyJwt(deps.keys, 'id', params.id_token_hint, { issuer: deps.issuer, now: epochSeconds(deps.clock), allowExpired: true });
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
  const client = clientId !== undefined ? await deps.clients.get(clientId) : undefined;
  if (clientId !== undefined && !client) throw refused('invalid_request', 'The client is unknown.');
  if (client && !client.enabled) throw refused('unauthorized_client', 'The client is disabled.');
  if (redirectUri !== undefined && !client?.postLogoutRedirectUris.includes(redirectUri)) {
    throw refused('invalid_request', 'The post_logout_redirect_uri is not registered for this client.');
  }
  return { hint, client, redirectUri };
}

export async function endSession(request: EndSessionRequest, deps: EndSessionDeps): Promise<EndSessionOutcome> {
  const { params } = request;
  const { hint, client, redirectUri } = await validateLogoutRequest(params, deps);
  const loaded = await deps.sessions.load(request.sessionId);
  const signedIn = loaded?.session.userId ? await deps.users.getById(loaded.session.userId) : undefined;
  // RP-Initiated Logout §2: ask the user when the hint is missing or names someone else.
  const confirmed = loaded !== undefined && isValidSessionCsrfToken(deps.csrfKey, loaded.key, CSRF_PURPOSE, params.csrf_token);
  // Cancel on the confirmation (its CSRF token proves it was shown): nothing changes, and the
  // way back goes to the application that asked or, when none said so, the one this browser
  // last signed in to (a registered client: the page links only to its registered addresses).
  if (signedIn && confirmed && params.cancel !== undefined) {
    return { kind: 'signed-out', stillSignedIn: true, client: client ?? await lastSignedInClient(loaded.session.clients, deps) };
  }
  if (signedIn && loaded && !confirmed && hint?.sub !== signedIn.subject) {
    return {
      kind: 'confirm',
      accountName: accountLabel(signedIn),
      csrfToken: sessionCsrfToken(deps.csrfKey, loaded.key, CSRF_PURPOSE),
      fields: CONFIRMED_FIELDS.flatMap((name) => (params[name] !== undefined ? [{ name, value: params[name] }] : [])),
      client,
    };
  }
  // Only the browser's own user's tokens end: an ID token (in logs, in browser history) is no
  // credential, so a hint alone, with no session, ends nothing. After the confirmation, the
  // session's user signs out, not the one the hint names.
  if (signedIn && client) await revokeUserClientTokens(deps, signedIn.id, [client.clientId]);
  if (loaded) await deps.sessions.destroy(loaded.key, loaded.session.userId);
  request.signedOut();
  request.audit({ type: 'logout', user_id: signedIn?.id ?? null, client_id: client?.clientId ?? null });
  // The user came from an upstream provider: sign-out continues there, then comes back.
  const upstreamUrl = loaded?.session.upstreamIdToken !== undefined && deps.continueUpstream
    ? await deps.continueUpstream(loaded.session.upstreamIdToken, { redirectUri, state: params.state })
    : undefined;
  if (upstreamUrl) return { kind: 'redirect', location: upstreamUrl, query: {} };
  if (redirectUri !== undefined) return { kind: 'redirect', location: redirectUri, query: params.state !== undefined ? { state: params.state } : {} };
  return { kind: 'signed-out', stillSignedIn: false, client };
}

/** The most recent client of the browser session that is still registered and enabled. */
async function lastSignedInClient(clientIds: readonly string[], deps: Pick<EndSessionDeps, 'clients'>): Promise<ClientRecord | undefined> {
  const clientId = clientIds.at(-1);
  const client = clientId !== undefined ? await deps.clients.get(clientId) : undefined;
  return client?.enabled ? client : undefined;
}

/** What revoking a user's tokens at some clients takes. */
export type ClientTokenRevocationDeps = Pick<EndSessionDeps, 'clock' | 'refreshTokens' | 'accessTokens' | 'revocations'>;

/**
 * Ends a user's tokens at each of `clientIds`: their refresh token families, and access tokens
 * issued with them or on their own (what signing out of those clients ends).
 */
export async function revokeUserClientTokens(deps: ClientTokenRevocationDeps, userId: string, clientIds: readonly string[], reason = 'end session'): Promise<void> {
  const now = new Date(deps.clock());
  const revoked = await Promise.all([...new Set(clientIds)].map(async (clientId) => {
    const [inFamilies, onTheirOwn] = await Promise.all([
      deps.refreshTokens.revokeForUserAndClient(userId, clientId, reason, now),
      deps.accessTokens.takeLive(userId, clientId, now),
    ]);
    return [...revokedFamilyTokens(inFamilies), ...revokedTokens(onTheirOwn)];
  }));
  if (revoked.flat().length > 0) await deps.revocations.revoke(revoked.flat());
}
