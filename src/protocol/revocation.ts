/**
 * RFC 7009 token revocation. A refresh token takes its family and the family's access tokens
 * with it; an access token is refused by userinfo and introspection until it would have
 * expired. Unknown tokens and other clients' tokens: nothing happens (and the answer is 200).
 */
import { OAuthError } from '../errors.ts';
import type { ClientRecord } from '../store/records.ts';
import type { RefreshTokenRepository } from '../store/types.ts';
import { revokedFamilyTokens, type RevocationList } from '../tokens/revocation-list.ts';
import type { Audit } from '../events/record.ts';
import type { Params } from './params.ts';
import { findToken, type TokenLookupDeps } from './token-lookup.ts';

export interface RevocationDeps extends TokenLookupDeps {
  refreshTokens: TokenLookupDeps['refreshTokens'] & Pick<RefreshTokenRepository, 'revokeFamily'>;
  revocations: Pick<RevocationList, 'revoke'>;
}

/** The revocation request of an authenticated client: `token` and `token_type_hint`. */
export async function revoke(params: Params, client: ClientRecord, deps: RevocationDeps, audit: Audit): Promise<void> {
  if (params.token === undefined) throw new OAuthError('invalid_request', 'The token parameter is required.');
  const found = await findToken(params.token, params.token_type_hint, deps);
  if (!found) return;
  if (found.kind === 'access') {
    const { payload } = found;
    if (payload.client_id !== client.clientId || typeof payload.jti !== 'string') return;
    await deps.revocations.revoke([{ jti: payload.jti, exp: Number(payload.exp) }]);
    audit({ type: 'token_revoked', kind: 'access_token', client_id: client.clientId, jti: payload.jti });
    return;
  }
  if (found.family.clientId !== client.clientId) return;
  const revoked = await deps.refreshTokens.revokeFamily(found.family.id, 'revoked by the client', new Date(deps.clock()));
  await deps.revocations.revoke(revokedFamilyTokens(revoked));
  audit({ type: 'token_revoked', kind: 'refresh_token', client_id: client.clientId, family_id: found.family.id });
}
