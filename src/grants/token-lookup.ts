/**
 * Finding a token presented to introspection or revocation: an access token (a JWT this service
 * signed) or a refresh token (by hash), tried in the order the hint suggests (RFC 7009 §2.1:
 * a wrong hint only changes the order).
 */
import { epochSeconds } from '../clock.ts';
import type { RefreshTokenState } from '../store/types.ts';
import { verifyJwt, type TokenClaims } from '../tokens/jwt.ts';
import { hashToken } from '../tokens/opaque.ts';
import type { GrantDeps } from './common.ts';

export type FoundToken =
  | { kind: 'access'; payload: TokenClaims & { jti?: string; client_id?: string } }
  | { kind: 'refresh'; state: RefreshTokenState };

const looksLikeJwt = (token: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);

async function findAccess(token: string, deps: GrantDeps, allowExpired: boolean): Promise<FoundToken | undefined> {
  if (!looksLikeJwt(token)) return undefined;
  const payload = await verifyJwt(deps.keys, 'access', token, { issuer: deps.issuer, now: epochSeconds(deps.clock), allowExpired });
  return payload ? { kind: 'access', payload } : undefined;
}

async function findRefresh(token: string, deps: GrantDeps): Promise<FoundToken | undefined> {
  if (token.length > 200) return undefined;
  const state = await deps.refreshTokens.find(hashToken(token));
  return state ? { kind: 'refresh', state } : undefined;
}

export async function findToken(token: string, hint: string | undefined, deps: GrantDeps, options: { allowExpired: boolean }): Promise<FoundToken | undefined> {
  const lookups = hint === 'refresh_token'
    ? [() => findRefresh(token, deps), () => findAccess(token, deps, options.allowExpired)]
    : [() => findAccess(token, deps, options.allowExpired), () => findRefresh(token, deps)];
  for (const lookup of lookups) {
    const found = await lookup();
    if (found) return found;
  }
  return undefined;
}

/** Whether a refresh token can still be used: current, unrevoked, unexpired. */
export function isRefreshActive(state: RefreshTokenState, now: number): boolean {
  return state.rotatedAt === null && state.family.revokedAt === null && state.expiresAt.getTime() > now && state.family.expiresAt.getTime() > now;
}
