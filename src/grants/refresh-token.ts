/**
 * RFC 6749 §6 with rotation (OAuth 2.0 Security BCP §4.14.2): every refresh returns a new
 * refresh token and the same response shape as the code exchange. A rotated-out token presented
 * again within the grace window gets the identical successor response (a retry or a second tab);
 * after it, reuse is theft: the family and its access tokens are revoked.
 */
import { z } from 'zod';
import { OAuthError } from '../errors.ts';
import { parseScope } from '../scopes.ts';
import type { ClientRecord, RefreshTokenState } from '../store/types.ts';
import { hashToken, randomToken } from '../tokens/opaque.ts';
import { revokedTokens } from '../tokens/revocation.ts';
import { keyFromBearer, open, seal } from '../tokens/secret-box.ts';
import type { Grant, GrantDeps, TokenResponse } from './common.ts';
import { assertUserMayReceiveTokens, mintUserTokens } from './user-tokens.ts';

const paramsSchema = z.object({ refresh_token: z.string(), scope: z.string().optional() });
type Params = z.infer<typeof paramsSchema>;

const SEAL_CONTEXT = 'refresh-successor';
const invalidGrant = (detail: string) => new OAuthError('invalid_grant', 'The refresh token is invalid, expired or revoked.', { detail });

/** RFC 6749 §6: the scope may narrow what was granted, never widen it. */
function narrowedScopes(asked: string | undefined, granted: string[]): string[] {
  const scopes = parseScope(asked);
  if (scopes.length === 0) return granted;
  const wider = scopes.find((s) => !granted.includes(s));
  if (wider !== undefined) throw new OAuthError('invalid_scope', `The scope ${wider} was not granted to this refresh token.`);
  return scopes;
}

/** Mints the successor tokens of a current refresh token (before anything is written). */
async function successor(state: RefreshTokenState, client: ClientRecord, params: Params, deps: GrantDeps) {
  const { family } = state;
  const now = deps.clock();
  if (state.expiresAt.getTime() <= now || family.expiresAt.getTime() <= now) throw invalidGrant('refresh token expired');
  const stored = await deps.users.getById(family.userId);
  // A directory account disabled or removed since the sign-in ends the session here.
  const user = stored ? await deps.currentUser(stored) : undefined;
  assertUserMayReceiveTokens(user);
  const token = randomToken();
  const issued = await mintUserTokens(user, client, {
    userId: family.userId,
    scopes: narrowedScopes(params.scope, family.scopes),
    authTime: Math.floor(family.authTime.getTime() / 1000),
    amr: family.amr,
    // OIDC Core §12.2: a refreshed ID token carries no nonce.
    nonce: undefined,
    claims: family.claims ?? undefined,
    allowedScopes: family.allowedScopes,
  }, deps, token);
  return {
    response: issued.response,
    next: {
      tokenHash: hashToken(token),
      expiresAt: new Date(now + deps.refreshLifetime.idleSeconds * 1000),
      access: { jti: issued.jti, expiresAt: new Date(issued.accessExpiresAt * 1000) },
      successorSealed: seal(keyFromBearer(params.refresh_token, SEAL_CONTEXT), JSON.stringify(issued.response), SEAL_CONTEXT),
    },
  };
}

export const refreshTokenGrant: Grant<Params> = {
  grantType: 'refresh_token',
  paramsSchema,
  async handle(params, { client }, deps): Promise<TokenResponse> {
    const oldHash = hashToken(params.refresh_token);
    const state = await deps.refreshTokens.find(oldHash);
    if (!state || state.family.clientId !== client.clientId) throw invalidGrant('unknown refresh token, or another client\'s');
    if (state.family.revokedAt) throw invalidGrant('family revoked');
    // Signed before the rotation commits: a failure here leaves the old token usable.
    const minted = state.rotatedAt === null ? await successor(state, client, params, deps) : undefined;
    const result = await deps.refreshTokens.rotate({
      oldHash,
      clientId: client.clientId,
      now: new Date(deps.clock()),
      graceSeconds: deps.refreshReuseGraceSeconds,
      ...(minted ? { next: minted.next } : {}),
    });
    switch (result.outcome) {
      case 'rotated':
        deps.audit('token_issued', { grant: 'refresh_token', client_id: client.clientId, family_id: state.family.id });
        return (minted as NonNullable<typeof minted>).response;
      case 'grace':
        return JSON.parse(open(keyFromBearer(params.refresh_token, SEAL_CONTEXT), result.successorSealed, SEAL_CONTEXT)) as TokenResponse;
      case 'reused':
        await deps.revocations.revoke(revokedTokens(result.revokedAccess));
        deps.audit('refresh_token_reuse_detected', {
          client_id: client.clientId,
          family_id: result.familyId,
          rotated_at: result.rotatedAt.toISOString(),
          reused_at: new Date(deps.clock()).toISOString(),
          access_tokens_revoked: result.revokedAccess.length,
        });
        throw invalidGrant('rotated-out refresh token reused: family revoked');
      case 'invalid':
        throw invalidGrant('refresh token not current');
    }
  },
};
