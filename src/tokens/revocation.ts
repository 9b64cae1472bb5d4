/**
 * Revoked access tokens, by `jti` (or all of a refresh token family's at once, by the family's
 * key: its access tokens carry the family in `svc_fid`), until they would have expired anyway. Checked on every
 * userinfo and introspection call, so the check must not cost a store round trip: each
 * instance keeps the list in memory. A revocation is written to the shared ephemeral store
 * (the record) and published (the news); every instance adds what it hears, and rebuilds its
 * copy from the record whenever it starts listening, since news published while it was not
 * listening is lost. While it is not listening (starting, Redis away) or the list has grown
 * past what it keeps in memory, the check asks the store as before.
 */
import type { Clock } from '../clock.ts';
import type { EphemeralStore, IssuedAccess, RevokedFamilies } from '../store/types.ts';
import type { TokenClaims } from './jwt.ts';

const NS = 'revoked-jti';
const CHANNEL = 'revoked-jti';
const DEFAULT_MAX_IN_MEMORY = 200_000;
const PRUNE_INTERVAL_MS = 60_000;

export interface RevokedToken {
  /** An access token's `jti`, or a family's key (familyRevocationKey). */
  jti: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

export interface RevocationList {
  /** Revokes access tokens until they expire (those expired already are skipped). */
  revoke(tokens: ReadonlyArray<RevokedToken>): Promise<void>;
  isRevoked(jti: string): Promise<boolean>;
  close(): void;
}

export function createRevocationList(ephemeral: EphemeralStore, clock: Clock, maxInMemory = DEFAULT_MAX_IN_MEMORY): RevocationList {
  const revoked = new Map<string, number>();
  let listening = false;
  // The in-memory copy is complete: listening, rebuilt since, and not over its size.
  let complete = false;
  let overflowed = false;
  // Bumped whenever listening starts or stops: a rebuild begun before cannot complete the copy.
  let epoch = 0;
  const now = () => Math.floor(clock() / 1000);

  const remember = ({ jti, exp }: RevokedToken) => {
    if (exp <= now()) return;
    if (revoked.size >= maxInMemory && !revoked.has(jti)) {
      overflowed = true;
      complete = false;
      return;
    }
    revoked.set(jti, exp);
  };

  const rebuild = async () => {
    const started = epoch;
    try {
      const record = await ephemeral.entries<number>(NS);
      if (started !== epoch) return;
      overflowed = false;
      for (const [jti, exp] of record) remember({ jti, exp });
      complete = !overflowed;
    } catch {
      // The store is away: checks keep asking it (and fail fast) until the next start of listening.
    }
  };

  const unsubscribe = ephemeral.subscribe(CHANNEL, {
    message(message) {
      const token = parseRevoked(message);
      if (token) remember(token);
    },
    listening(isListening) {
      listening = isListening;
      complete = false;
      epoch += 1;
      if (isListening) void rebuild();
    },
  });

  const pruner = setInterval(() => {
    const at = now();
    for (const [jti, exp] of revoked) if (exp <= at) revoked.delete(jti);
    // Room again after an overflow: rebuild the copy from the record.
    if (overflowed && listening && revoked.size < maxInMemory / 2) void rebuild();
  }, PRUNE_INTERVAL_MS);
  pruner.unref();

  return {
    async revoke(tokens) {
      const at = now();
      const live = tokens.filter((t) => t.exp > at);
      await Promise.all(live.map((t) => ephemeral.set(NS, t.jti, t.exp, t.exp - at)));
      for (const t of live) remember(t);
      await Promise.all(live.map((t) => ephemeral.publish(CHANNEL, JSON.stringify({ jti: t.jti, exp: t.exp }))));
    },
    async isRevoked(jti) {
      if (complete) return (revoked.get(jti) ?? 0) > now();
      return (await ephemeral.get<number>(NS, jti)) !== undefined;
    },
    close() {
      clearInterval(pruner);
      unsubscribe();
    },
  };
}

function parseRevoked(message: string): RevokedToken | undefined {
  try {
    const value = JSON.parse(message) as Partial<RevokedToken>;
    return typeof value.jti === 'string' && typeof value.exp === 'number' ? { jti: value.jti, exp: value.exp } : undefined;
  } catch {
    return undefined;
  }
}

/** The key under which every access token of a refresh token family is revoked at once. */
export const familyRevocationKey = (familyId: string) => `family:${familyId}`;

const toRevoked = (t: IssuedAccess): RevokedToken => ({ jti: t.jti, exp: Math.floor(t.expiresAt.getTime() / 1000) });

/** Access tokens issued on their own (end session), as the list takes them. */
export function revokedTokens(tokens: readonly IssuedAccess[]): RevokedToken[] {
  return tokens.map(toRevoked);
}

/** What revoking families leaves to revoke: each family's key, and legacy access tokens one by one. */
export function revokedFamilyTokens(revoked: RevokedFamilies): RevokedToken[] {
  return [
    ...revoked.families.map((f) => toRevoked({ jti: familyRevocationKey(f.id), expiresAt: f.accessExpiresAt })),
    ...revoked.legacyAccess.map(toRevoked),
  ];
}

/** Whether a verified access token was revoked, on its own or with its refresh token family. */
export async function isAccessTokenRevoked(list: RevocationList, claims: TokenClaims): Promise<boolean> {
  const [own, family] = await Promise.all([
    typeof claims.jti === 'string' ? list.isRevoked(claims.jti) : false,
    typeof claims.svc_fid === 'string' ? list.isRevoked(familyRevocationKey(claims.svc_fid)) : false,
  ]);
  return own || family;
}
