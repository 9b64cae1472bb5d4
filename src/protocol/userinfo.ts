/**
 * OIDC Core §5.3 userinfo: the user's claims for a Bearer access token (RFC 6750 §2.1, header
 * only), limited to the token's scopes plus the `userinfo` claims the claims parameter asked
 * for. `role` is always an array here.
 */
import { epochSeconds, type Clock } from '../clock.ts';
import { OAuthError } from '../errors.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import type { ClientRecord } from '../store/records.ts';
import type { UserRepository } from '../store/types.ts';
import { userClaims } from '../tokens/claims.ts';
import { verifyJwt } from '../tokens/jwt.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { isAccessTokenRevoked, type RevocationList } from '../tokens/revocation-list.ts';
import { bearerToken, invalidToken } from './bearer.ts';

export interface UserinfoDeps {
  issuer: string;
  clock: Clock;
  keys: KeyManager;
  revocations: RevocationList;
  users: Pick<UserRepository, 'getById'>;
  clients: Pick<ClientsCache, 'get'>;
}

export interface UserinfoRequest {
  /** The raw Authorization header, if any. */
  authorization: string | undefined;
  /**
   * The caller's own rule about the token's client (the HTTP edge's per-client CORS): it throws
   * to refuse. Asked once the token is known good, before anything about the user is told.
   */
  checkClient?: (client: ClientRecord) => void;
}


export async function userinfo(request: UserinfoRequest, deps: UserinfoDeps): Promise<Record<string, unknown>> {
  const payload = await verifyJwt(deps.keys, 'access', bearerToken(request.authorization), { issuer: deps.issuer, now: epochSeconds(deps.clock) });
  if (!payload) throw invalidToken('token does not verify');
  // Client credentials tokens name no user.
  if (typeof payload.svc_uid !== 'string') throw invalidToken('not a user access token');
  // Independent lookups, asked together.
  const [revoked, user] = await Promise.all([
    isAccessTokenRevoked(deps.revocations, payload),
    deps.users.getById(payload.svc_uid),
  ]);
  if (revoked) throw invalidToken('token revoked');
  if (request.checkClient) {
    const client = typeof payload.client_id === 'string' ? await deps.clients.get(payload.client_id) : undefined;
    if (!client) throw invalidToken('client of the token is gone');
    request.checkClient(client);
  }
  if (!user || user.locked) throw invalidToken('user removed or locked');
  const scopes = typeof payload.scope === 'string' ? payload.scope.split(' ') : [];
  if (!scopes.includes('openid')) throw new OAuthError('insufficient_scope', 'The access token was not granted the openid scope.');
  const extra = Array.isArray(payload.svc_userinfo) ? payload.svc_userinfo.filter((c): c is string => typeof c === 'string') : [];
  return { sub: user.subject, ...userClaims(user, { scopes, extra, idp: user.source, roleShape: 'userinfo' }) };
}
