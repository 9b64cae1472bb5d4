/** Refresh token families and the access tokens issued beside them. */
import type { RefreshFamilyInput, RefreshGeneration, RefreshFamilyState } from '../records.ts';

/** An access token issued together with a refresh token of a family from before generations. */
export interface IssuedAccess {
  jti: string;
  expiresAt: Date;
}

/** A rotation: the family moves from generation `from` to the next, if it is still there. */
export interface AdvanceInput {
  familyId: string;
  /** The authenticated client: another client's family is not advanced. */
  clientId: string;
  from: number;
  /** The issue time of the new generation's tokens (whole seconds). */
  issuedAt: Date;
  /** Idle expiry of the new generation (capped at the family's end by the store). */
  tokenExpiresAt: Date;
  accessExpiresAt: Date;
  now: Date;
  /** Rotation times before this are no longer kept (the grace window has passed them). */
  graceSince: Date;
}

/** What revoking families leaves for the revocation list. */
export interface RevokedFamilies {
  /** Each family this call revoked, with the expiry of the last access token it issued. */
  families: Array<{ id: string; accessExpiresAt: Date }>;
  /** Live access tokens of those families issued before generations, one by one. */
  legacyAccess: IssuedAccess[];
}

/** A live family as a user's list of sessions shows it. */
export interface UserRefreshFamily {
  id: string;
  clientId: string;
  createdAt: Date;
  /** The last rotation, or the creation when never rotated. */
  lastUsedAt: Date;
  /** The family's absolute end. */
  expiresAt: Date;
}

export interface RefreshTokenRepository {
  /** Creates a family at generation 0. */
  createFamily(family: RefreshFamilyInput & Pick<RefreshGeneration, 'tokenSalt' | 'tokenExpiresAt' | 'accessExpiresAt'>): Promise<void>;
  get(familyId: string): Promise<RefreshFamilyState | undefined>;
  /**
   * A refresh token issued before generations (kept by hash): its family, and whether it was
   * that family's current token (generation 0) or an earlier one.
   */
  findLegacy(tokenHash: string): Promise<{ familyId: string; current: boolean } | undefined>;
  /**
   * Rotates in one statement that only moves a live family still at `from`: of two racing
   * rotations of one token, on any instances, exactly one returns true.
   */
  advance(input: AdvanceInput): Promise<boolean>;
  /** Revokes a family (once: a second call revokes nothing and returns no family). */
  revokeFamily(familyId: string, reason: string, now: Date): Promise<RevokedFamilies>;
  /** A user's live families (not revoked, not past their end or idle expiry at `now`), oldest first. */
  listForUser(userId: string, now: Date): Promise<UserRefreshFamily[]>;
    /** Revokes every family of a user at a client (end session). */
  revokeForUserAndClient(userId: string, clientId: string, reason: string, now: Date): Promise<RevokedFamilies>;
  /**
   * Deletes up to `limit` families past their absolute end whose last access token has expired
   * too (nothing of them can be used or revoked any more); returns how many.
   */
  purgeEnded(now: Date, limit: number): Promise<number>;
}

/** Access tokens issued without a refresh token, kept until they expire, for end session. */
export interface AccessTokenRepository {
  record(userId: string, clientId: string, access: IssuedAccess, now: Date): Promise<void>;
  /** Removes and returns a client's unexpired access tokens for a user. */
  takeLive(userId: string, clientId: string, now: Date): Promise<IssuedAccess[]>;
}
