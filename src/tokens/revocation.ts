/**
 * Revoked access tokens, by `jti`, until they would have expired anyway. Checked on every
 * userinfo and introspection call, so it lives in the ephemeral store (one round trip).
 */
import type { EphemeralStore } from '../store/types.ts';

const NS = 'revoked-jti';

/** Revokes an access token until `exp` (seconds since the epoch). */
export async function revokeAccessToken(ephemeral: EphemeralStore, jti: string, exp: number, now: number): Promise<void> {
  if (exp <= now) return;
  await ephemeral.set(NS, jti, 1, exp - now);
}

export async function isAccessTokenRevoked(ephemeral: EphemeralStore, jti: string): Promise<boolean> {
  return (await ephemeral.get<number>(NS, jti)) !== undefined;
}

/** Revokes access tokens handed back by the store when their family was revoked. */
export async function revokeAccessTokens(ephemeral: EphemeralStore, tokens: ReadonlyArray<{ jti: string; expiresAt: Date }>, now: number): Promise<void> {
  await Promise.all(tokens.map((t) => revokeAccessToken(ephemeral, t.jti, Math.floor(t.expiresAt.getTime() / 1000), now)));
}
