/**
 * RFC 7662 token introspection, for confidential clients, about tokens issued to the asking
 * client only: to anyone else, and for anything expired, revoked, rotated or unknown, or of a
 * user locked or removed, exactly `{"active": false}`.
 */
import { OAuthError } from '../errors.ts';
import type { Audit } from '../events/record.ts';
import { judgeAccessClaims, type AccessTokenDeps } from './access-token.ts';
import type { AuthenticatedClient } from './client-auth.ts';
import type { Params } from './params.ts';
import { currentGenerationIssuedAt, findToken, isRefreshActive, type TokenLookupDeps } from './token-lookup.ts';

export type IntrospectionResponse =
  | { active: false }
  | { active: true; iss: string; sub: string; client_id: string; scope: string; token_type: 'Bearer'; iat: number; exp: number };

export interface IntrospectionDeps extends TokenLookupDeps, AccessTokenDeps {}

const INACTIVE: IntrospectionResponse = { active: false };

/** The introspection request of an authenticated client: `token` and `token_type_hint`. */
export async function introspect(params: Params, { client, method }: AuthenticatedClient, deps: IntrospectionDeps, audit: Audit): Promise<IntrospectionResponse> {
  // RFC 7662 §2.1: the caller must be authorized; only confidential clients are, so a public one fails authentication.
  if (method === 'none') {
    audit({ type: 'client_authentication_failed', reason: 'public_client', client_id: client.clientId });
    throw new OAuthError('invalid_client', 'Client authentication failed.', { detail: `public client ${client.clientId} may not introspect` });
  }
  if (params.token === undefined) throw new OAuthError('invalid_request', 'The token parameter is required.');
  const found = await findToken(params.token, params.token_type_hint, deps);
  if (!found) return INACTIVE;
  if (found.kind === 'access') {
    const { payload } = found;
    if (payload.client_id !== client.clientId || typeof payload.jti !== 'string') return INACTIVE;
    // Active exactly when userinfo and the administration API would accept it.
    if (!(await judgeAccessClaims(payload, deps)).holds) return INACTIVE;
    return {
      active: true,
      iss: deps.issuer,
      sub: String(payload.sub),
      client_id: client.clientId,
      scope: typeof payload.scope === 'string' ? payload.scope : '',
      token_type: 'Bearer',
      iat: Number(payload.iat),
      exp: Number(payload.exp),
    };
  }
  const { family } = found;
  if (family.clientId !== client.clientId || !isRefreshActive(found, deps.clock())) return INACTIVE;
  const user = await deps.users.getById(family.userId);
  if (!user || user.locked) return INACTIVE;
  return {
    active: true,
    iss: deps.issuer,
    sub: user.subject,
    client_id: client.clientId,
    scope: family.scopes.join(' '),
    token_type: 'Bearer',
    iat: Math.floor(currentGenerationIssuedAt(family).getTime() / 1000),
    exp: Math.floor(family.tokenExpiresAt.getTime() / 1000),
  };
}
