/**
 * RFC 7662 token introspection, for the client the token was issued to only: to anyone else,
 * and for anything expired, revoked, rotated or unknown, or of a user locked or removed, exactly
 * `{"active": false}`.
 */
import type { ClientRecord } from '../store/types.ts';
import { isAccessTokenRevoked } from '../tokens/revocation.ts';
import type { GrantDeps } from './common.ts';
import { currentGenerationIssuedAt, findToken, isRefreshActive } from './token-lookup.ts';

export type IntrospectionResponse =
  | { active: false }
  | { active: true; iss: string; sub: string; client_id: string; scope: string; token_type: 'Bearer'; iat: number; exp: number };

const INACTIVE: IntrospectionResponse = { active: false };

export async function introspect(token: string, hint: string | undefined, client: ClientRecord, deps: GrantDeps): Promise<IntrospectionResponse> {
  const found = await findToken(token, hint, deps, { allowExpired: false });
  if (!found) return INACTIVE;
  if (found.kind === 'access') {
    const { payload } = found;
    if (payload.client_id !== client.clientId || typeof payload.jti !== 'string') return INACTIVE;
    // Independent lookups, asked together. A user's token of a user since locked or removed is
    // inactive, as userinfo refuses it (client credentials tokens name no user).
    const [revoked, user] = await Promise.all([
      isAccessTokenRevoked(deps.revocations, payload),
      typeof payload.svc_uid === 'string' ? deps.users.getById(payload.svc_uid) : undefined,
    ]);
    if (revoked) return INACTIVE;
    if (typeof payload.svc_uid === 'string' && (!user || user.locked)) return INACTIVE;
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
