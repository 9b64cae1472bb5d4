/**
 * RFC 7009 token revocation. A refresh token takes its family and the family's access tokens
 * with it; an access token is refused by userinfo and introspection until it would have
 * expired. Unknown tokens and other clients' tokens: nothing happens (and the answer is 200).
 */
import type { ClientRecord } from '../store/types.ts';
import { revokedFamilyTokens } from '../tokens/revocation.ts';
import type { GrantDeps } from './common.ts';
import { findToken } from './token-lookup.ts';

export async function revoke(token: string, hint: string | undefined, client: ClientRecord, deps: GrantDeps): Promise<void> {
  const found = await findToken(token, hint, deps, { allowExpired: false });
  if (!found) return;
  if (found.kind === 'access') {
    const { payload } = found;
    if (payload.client_id !== client.clientId || typeof payload.jti !== 'string') return;
    await deps.revocations.revoke([{ jti: payload.jti, exp: Number(payload.exp) }]);
    deps.audit('token_revoked', { kind: 'access_token', client_id: client.clientId, jti: payload.jti });
    return;
  }
  if (found.family.clientId !== client.clientId) return;
  const revoked = await deps.refreshTokens.revokeFamily(found.family.id, 'revoked by the client', new Date(deps.clock()));
  await deps.revocations.revoke(revokedFamilyTokens(revoked));
  deps.audit('token_revoked', { kind: 'refresh_token', client_id: client.clientId, family_id: found.family.id });
}
