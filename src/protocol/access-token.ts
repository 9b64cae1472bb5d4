/**
 * The one access-token verifier: whoever accepts an access token this service issued (userinfo,
 * introspection, the administration API) asks here whether it still holds. A token holds when
 * it verifies (signature, `typ`, issuer, expiry), is not revoked (on its own or with its refresh
 * token family), its client still exists and is enabled, and the user it names (if any: client
 * credentials tokens name none) still exists and is not locked. What a caller needs beyond that
 * (the openid scope, the administration scopes, the asking client) stays with the caller.
 */
import { epochSeconds, type Clock } from '../clock.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import type { ClientRecord, UserRecord } from '../store/records.ts';
import type { UserRepository } from '../store/types.ts';
import { verifyJwt, type TokenClaims } from '../tokens/jwt.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { isAccessTokenRevoked, type RevocationList } from '../tokens/revocation-list.ts';
import { bearerToken, invalidToken } from './bearer.ts';

export interface AccessTokenDeps {
  issuer: string;
  clock: Clock;
  keys: KeyManager;
  revocations: RevocationList;
  /** Read through the clients cache, so that an SQL edit of the client reaches its tokens within a second. */
  clients: Pick<ClientsCache, 'get'>;
  users: Pick<UserRepository, 'getById'>;
}

/** An access token that holds, with what it was found to be about. */
export interface AcceptedAccessToken {
  claims: TokenClaims;
  client: ClientRecord;
  /** The user the token was issued for; undefined for a client credentials token. */
  user: UserRecord | undefined;
  /** The token's `scope`, split. */
  scopes: string[];
}

export type AccessTokenVerdict = { holds: true; token: AcceptedAccessToken } | { holds: false; reason: string };

export interface AcceptOptions {
  /** The one kind of token the caller serves: a user's (userinfo) or a client's own (client credentials). */
  kind?: 'user' | 'client';
  /**
   * The caller's own rule about the token's client, asked once the token and its client are
   * known good and before anything about the user is told (userinfo's per-client CORS): it throws
   * to refuse.
   */
  checkClient?: ((client: ClientRecord) => void) | undefined;
}

/** The claims of an access token this service signed and that has not expired, or undefined. */
export function readAccessToken(token: string, deps: Pick<AccessTokenDeps, 'issuer' | 'clock' | 'keys'>): Promise<TokenClaims | undefined> {
  return verifyJwt(deps.keys, 'access', token, { issuer: deps.issuer, now: epochSeconds(deps.clock) });
}

/** Whether the claims of a verified access token still hold: revocation, client, user. */
export async function judgeAccessClaims(claims: TokenClaims, deps: AccessTokenDeps, options: AcceptOptions = {}): Promise<AccessTokenVerdict> {
  const clientId = typeof claims.client_id === 'string' ? claims.client_id : undefined;
  const userId = typeof claims.svc_uid === 'string' ? claims.svc_uid : undefined;
  // Independent lookups, asked together.
  const [revoked, client, user] = await Promise.all([
    isAccessTokenRevoked(deps.revocations, claims),
    clientId === undefined ? undefined : deps.clients.get(clientId),
    userId === undefined ? undefined : deps.users.getById(userId),
  ]);
  if (revoked) return { holds: false, reason: 'token revoked' };
  if (!client?.enabled) return { holds: false, reason: `client ${clientId ?? '(none)'} is gone or disabled` };
  options.checkClient?.(client);
  if (userId !== undefined && (!user || user.locked)) return { holds: false, reason: 'user removed or locked' };
  const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  return { holds: true, token: { claims, client, user, scopes } };
}

/**
 * RFC 6750 §2.1: the access token of the Authorization header, accepted, or a 401 `invalid_token`
 * that says the same to the caller whatever the reason (the reason is logged).
 */
export async function acceptBearerToken(authorization: string | undefined, deps: AccessTokenDeps, options: AcceptOptions = {}): Promise<AcceptedAccessToken> {
  const claims = await readAccessToken(bearerToken(authorization), deps);
  if (!claims) throw invalidToken('token does not verify');
  // Client credentials tokens name no user.
  if (options.kind !== undefined && (typeof claims.svc_uid === 'string' ? 'user' : 'client') !== options.kind) throw invalidToken(`not a ${options.kind} access token`);
  const verdict = await judgeAccessClaims(claims, deps, options);
  if (!verdict.holds) throw invalidToken(verdict.reason);
  return verdict.token;
}
