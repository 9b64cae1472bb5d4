/**
 * Finding a token presented to the token endpoint, introspection or revocation: an access token
 * (a JWT this service signed) or a refresh token (its family and generation, checked against
 * the family's salt; or, issued before generations, by hash), tried in the order the hint
 * suggests (RFC 7009 §2.1: a wrong hint only changes the order).
 */
import type { RefreshFamilyState } from '../store/records.ts';
import type { RefreshTokenRepository } from '../store/types.ts';
import type { TokenClaims } from '../tokens/jwt.ts';
import { hashToken } from '../tokens/opaque.ts';
import type { RefreshTokenCodec } from '../tokens/refresh-tokens.ts';
import { readAccessToken, type AccessTokenDeps } from './access-token.ts';

/** What finding a refresh token reads: the families, and the codec that checks a token is ours. */
export interface RefreshLookupDeps {
  refreshTokens: Pick<RefreshTokenRepository, 'get' | 'findLegacy'>;
  refreshTokenCodec: Pick<RefreshTokenCodec, 'read' | 'isGenuine'>;
}

/** What finding any token reads: the refresh token lookup, and the keys that verify access tokens. */
export interface TokenLookupDeps extends RefreshLookupDeps, Pick<AccessTokenDeps, 'issuer' | 'clock' | 'keys'> {}

export type FoundToken =
  | { kind: 'access'; payload: TokenClaims & { jti?: string; client_id?: string } }
  | ({ kind: 'refresh' } & PresentedRefresh);

/** A genuine refresh token: its family as stored now, and the generation it belongs to. */
export interface PresentedRefresh {
  family: RefreshFamilyState;
  /** Of the presented token; -1 for a token from before generations that had been rotated out. */
  generation: number;
}

/** The shape of refresh tokens issued before generations: 256 random bits, base64url. */
const LEGACY_REFRESH_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** readAccessToken answers undefined at once for anything not shaped as a compact JWS (a refresh token). */
async function findAccess(token: string, deps: TokenLookupDeps): Promise<FoundToken | undefined> {
  const payload = await readAccessToken(token, deps);
  return payload ? { kind: 'access', payload } : undefined;
}

/** The family and generation of a refresh token this service issued; undefined for anything else. */
export async function findRefreshToken(token: string, deps: RefreshLookupDeps): Promise<PresentedRefresh | undefined> {
  const presented = deps.refreshTokenCodec.read(token);
  if (presented) {
    const family = await deps.refreshTokens.get(presented.familyId);
    if (!family || !deps.refreshTokenCodec.isGenuine(presented, family.tokenSalt)) return undefined;
    return { family, generation: presented.generation };
  }
  if (!LEGACY_REFRESH_TOKEN.test(token)) return undefined;
  const legacy = await deps.refreshTokens.findLegacy(hashToken(token));
  const family = legacy ? await deps.refreshTokens.get(legacy.familyId) : undefined;
  return legacy && family ? { family, generation: legacy.current ? 0 : -1 } : undefined;
}

async function findRefresh(token: string, deps: RefreshLookupDeps): Promise<FoundToken | undefined> {
  const found = await findRefreshToken(token, deps);
  return found ? { kind: 'refresh', ...found } : undefined;
}

/** A token this service issued and that has not expired (an access token), or undefined. */
export async function findToken(token: string, hint: string | undefined, deps: TokenLookupDeps): Promise<FoundToken | undefined> {
  const lookups = hint === 'refresh_token'
    ? [() => findRefresh(token, deps), () => findAccess(token, deps)]
    : [() => findAccess(token, deps), () => findRefresh(token, deps)];
  for (const lookup of lookups) {
    const found = await lookup();
    if (found) return found;
  }
  return undefined;
}

/** When the family's current generation was issued: its last rotation, or the code exchange. */
export function currentGenerationIssuedAt(family: RefreshFamilyState): Date {
  return family.rotatedAt ?? family.createdAt;
}

/** Whether a refresh token can still be used: of the current generation, unrevoked, unexpired. */
export function isRefreshActive({ family, generation }: PresentedRefresh, now: number): boolean {
  return generation === family.generation && family.revokedAt === null && family.tokenExpiresAt.getTime() > now && family.expiresAt.getTime() > now;
}
