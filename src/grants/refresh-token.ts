/**
 * RFC 6749 §6 with rotation (OAuth 2.0 Security BCP §4.14.2): every refresh returns a new
 * refresh token and the same response shape as the code exchange. A family counts generations;
 * only a token of the current one rotates. A token rotated out within the grace window,
 * presented again (a retry, a second tab), gets the identical successor response: the same
 * claims signed again, and RS256 signatures are deterministic. Any other earlier generation is
 * theft: the family and its access tokens are revoked.
 */
import { z } from 'zod';
import { OAuthError } from '../errors.ts';
import { isStandardScope, parseScope } from '../scopes.ts';
import type { Audit } from '../events/record.ts';
import { currentGenerationIssuedAt, findRefreshToken, type RefreshLookupDeps } from '../protocol/token-lookup.ts';
import type { ClientRecord, RefreshFamilyState, UserRecord } from '../store/records.ts';
import type { RefreshTokenRepository, UserRepository } from '../store/types.ts';
import type { RefreshTokenCodec } from '../tokens/refresh-tokens.ts';
import { revokedFamilyTokens, type RevocationList } from '../tokens/revocation-list.ts';
import { defineGrant, type Grant, type RefreshLifetime, type SigningDeps, type TokenResponse } from './common.ts';
import { assertUserMayReceiveTokens, mintUserTokens } from './user-tokens.ts';

export interface RefreshTokenDeps extends SigningDeps, RefreshLookupDeps {
  users: Pick<UserRepository, 'getById'>;
  /** The user as the sign-in source knows them now (a directory is asked again); undefined when gone. */
  currentUser(user: UserRecord): Promise<UserRecord | undefined>;
  refreshTokens: RefreshLookupDeps['refreshTokens'] & Pick<RefreshTokenRepository, 'advance' | 'revokeFamily'>;
  refreshTokenCodec: RefreshLookupDeps['refreshTokenCodec'] & Pick<RefreshTokenCodec, 'issue' | 'accessJti'>;
  revocations: Pick<RevocationList, 'revoke'>;
  refreshLifetime: Pick<RefreshLifetime, 'idleSeconds'>;
  /** Seconds a rotated-out refresh token still gets its successor response again. */
  refreshReuseGraceSeconds: number;
}

/** The deps of one refresh: the grant's, and the request's audit. */
type Refresh = RefreshTokenDeps & { audit: Audit };

const paramsSchema = z.object({ refresh_token: z.string(), scope: z.string().optional() });

const invalidGrant = (detail: string) => new OAuthError('invalid_grant', 'The refresh token is invalid, expired or revoked.', { detail });

/** RFC 6749 §6: the scope may narrow what was granted, never widen it. */
function narrowedScopes(asked: string | undefined, granted: string[]): string[] {
  const scopes = parseScope(asked);
  if (scopes.length === 0) return granted;
  const wider = scopes.find((s) => !granted.includes(s));
  if (wider !== undefined) throw new OAuthError('invalid_scope', `The scope ${wider} was not granted to this refresh token.`);
  return scopes;
}

/**
 * The scopes a new generation carries: those asked for (or all granted), less any API scope
 * removed from the client since the sign-in (idp scopes remove). Reads nothing: checked before
 * the user is looked up or anything is signed.
 */
function generationScopes(asked: string | undefined, family: RefreshFamilyState, client: ClientRecord): string[] {
  return narrowedScopes(asked, family.scopes).filter((s) => isStandardScope(s) || client.scopes.includes(s));
}

/** When the successor of `generation` was issued, if that was within the grace window. */
function successorIssuedInGrace(family: RefreshFamilyState, generation: number, deps: RefreshTokenDeps): Date | undefined {
  // 0: the generation just rotated out; 1: the one before it; and so on.
  const back = family.generation - 1 - generation;
  const issuedAt = back === 0 ? family.rotatedAt : family.earlierRotations[back - 1];
  return issuedAt && deps.clock() - issuedAt.getTime() <= deps.refreshReuseGraceSeconds * 1000 ? issuedAt : undefined;
}

/** Signs the tokens of one generation of a family with `scopes`, issued at `iat` (seconds). */
async function mintGeneration(family: RefreshFamilyState, generation: number, iat: number, client: ClientRecord, scopes: string[], deps: Refresh) {
  const stored = await deps.users.getById(family.userId);
  // A directory account disabled or removed since the sign-in ends the session here.
  const user = stored ? await deps.currentUser(stored) : undefined;
  assertUserMayReceiveTokens(user);
  return mintUserTokens(user, client, {
    userId: family.userId,
    scopes,
    authTime: Math.floor(family.authTime.getTime() / 1000),
    amr: family.amr,
    // OIDC Core §12.2: a refreshed ID token carries no nonce.
    nonce: undefined,
    claims: family.claims ?? undefined,
    allowedScopes: family.allowedScopes,
  }, deps, {
    familyId: family.id,
    refreshToken: deps.refreshTokenCodec.issue(family.id, generation, family.tokenSalt),
    jti: deps.refreshTokenCodec.accessJti(family.id, generation),
    iat,
  });
}

/** The response that rotated `generation` out, signed again. */
async function successorAgain(family: RefreshFamilyState, generation: number, issuedAt: Date, client: ClientRecord, scopes: string[], deps: Refresh): Promise<TokenResponse> {
  const iat = Math.floor(issuedAt.getTime() / 1000);
  return (await mintGeneration(family, generation + 1, iat, client, scopes, deps)).response;
}

/** Moves a family on from its current generation; signed before the rotation commits, so a failure leaves the token usable. */
async function rotate(family: RefreshFamilyState, client: ClientRecord, asked: string | undefined, deps: Refresh): Promise<TokenResponse> {
  const now = deps.clock();
  if (family.tokenExpiresAt.getTime() <= now || family.expiresAt.getTime() <= now) throw invalidGrant('refresh token expired');
  const scopes = generationScopes(asked, family, client);
  const iat = Math.floor(now / 1000);
  const issued = await mintGeneration(family, family.generation + 1, iat, client, scopes, deps);
  const advanced = await deps.refreshTokens.advance({
    familyId: family.id,
    clientId: client.clientId,
    from: family.generation,
    issuedAt: new Date(iat * 1000),
    tokenExpiresAt: new Date(now + deps.refreshLifetime.idleSeconds * 1000),
    accessExpiresAt: new Date(issued.accessExpiresAt * 1000),
    now: new Date(now),
    graceSince: new Date(now - deps.refreshReuseGraceSeconds * 1000),
  });
  if (advanced) {
    deps.audit({ type: 'token_issued', grant: 'refresh_token', client_id: client.clientId, family_id: family.id });
    return issued.response;
  }
  // Another refresh of this token won the race (on any instance): answer as it did.
  const after = await deps.refreshTokens.get(family.id);
  const issuedAt = after && after.revokedAt === null ? successorIssuedInGrace(after, family.generation, deps) : undefined;
  if (!after || !issuedAt) throw invalidGrant('refresh token not current');
  return issuedAt.getTime() === iat * 1000 ? issued.response : successorAgain(after, family.generation, issuedAt, client, scopes, deps);
}

export function createRefreshTokenGrant(grantDeps: RefreshTokenDeps): Grant {
  return defineGrant('refresh_token', paramsSchema, async (params, { client }, audit) => {
    const deps: Refresh = { ...grantDeps, audit };
    // The one read before the checks: the family says what was granted.
    const found = await findRefreshToken(params.refresh_token, deps);
    if (!found || found.family.clientId !== client.clientId) throw invalidGrant('unknown refresh token, or another client\'s');
    const { family, generation } = found;
    if (family.revokedAt) throw invalidGrant('family revoked');
    if (generation === family.generation) return rotate(family, client, params.scope, deps);
    if (generation > family.generation) throw invalidGrant('refresh token of a generation not issued');
    const issuedAt = successorIssuedInGrace(family, generation, deps);
    if (issuedAt) return successorAgain(family, generation, issuedAt, client, generationScopes(params.scope, family, client), deps);
    const now = deps.clock();
    const revoked = await deps.refreshTokens.revokeFamily(family.id, 'refresh token reused', new Date(now));
    // Only the request that revoked the family reports it (two thieves' requests at once: one event).
    if (revoked.families.length > 0) {
      await deps.revocations.revoke(revokedFamilyTokens(revoked));
      deps.audit({
        type: 'refresh_token_reuse_detected',
        client_id: client.clientId,
        family_id: family.id,
        rotated_at: currentGenerationIssuedAt(family).toISOString(),
        reused_at: new Date(now).toISOString(),
        access_tokens_revoked: revoked.families.length + revoked.legacyAccess.length,
      });
    }
    throw invalidGrant('rotated-out refresh token reused: family revoked');
  });
}
