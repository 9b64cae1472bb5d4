/**
 * OIDC Core §5.3 userinfo: the user's claims for a Bearer access token (RFC 6750 §2.1, header
 * only), limited to the token's scopes plus the `userinfo` claims the claims parameter asked
 * for. `role` is always an array here.
 */
import { OAuthError } from '../errors.ts';
import type { ClientRecord } from '../store/records.ts';
import { userClaims } from '../tokens/claims.ts';
import { acceptBearerToken, type AccessTokenDeps } from './access-token.ts';

export type UserinfoDeps = AccessTokenDeps;

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
  const { claims, user, scopes } = await acceptBearerToken(request.authorization, deps, { kind: 'user', checkClient: request.checkClient });
  // Accepted as a user's token, so its user exists: this only tells the compiler.
  if (!user) throw new Error('a user access token was accepted without its user');
  if (!scopes.includes('openid')) throw new OAuthError('insufficient_scope', 'The access token was not granted the openid scope.');
  const extra = Array.isArray(claims.svc_userinfo) ? claims.svc_userinfo.filter((c): c is string => typeof c === 'string') : [];
  return { sub: user.subject, ...userClaims(user, { scopes, extra, idp: user.source, roleShape: 'userinfo' }) };
}
