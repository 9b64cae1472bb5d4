/**
 * Revoked access tokens, by `jti` (or all of a refresh token family's at once, by the family's
 * key: its access tokens carry the family in `svc_fid`), until they would have expired anyway.
 * Checked on every userinfo and introspection call, so the check must not cost a store round
 * trip: each instance keeps the list in memory.
 *
 * The record is durable (the `revocations` table), so a revocation outlives the loss of Redis
 * and reaches instances started afterwards: every instance rebuilds its copy from it at start,
 * and again whenever the database's change feed reconnected (news sent meanwhile is lost). News
 * of a revocation arrives twice, and either is enough: from the database (a trigger announces
 * each new row, whoever wrote it: an instance, `idp users`, SQL) and over Redis (the fast path,
 * which keeps working while the database's feed reconnects). Until its copy is rebuilt, or
 * when the list has grown past what it keeps in memory, the check asks the durable record.
 */
import type { Clock } from '../clock.ts';
import type { RevocationRecord } from '../store/records.ts';
import type { DurableStore, EphemeralStore, IssuedAccess, RevokedFamilies } from '../store/types.ts';
import { NAMESPACES } from '../store/types.ts';
import type { TokenClaims } from './jwt.ts';

const CHANNEL = 'revoked-jti';
/** Where versions before the durable record kept revocations in Redis (by jti, the expiry as value). */
const LEGACY_NS = NAMESPACES.revokedJti;
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
  /**
   * Revokes every refresh token family of a user and every access token issued to them (a
   * password change, ASVS 3.3.3); the store does it by itself for locked, removed or flagged users.
   */
  revokeUser(userId: string, reason: string): Promise<void>;
  /**
   * Takes revocations that a transaction of the caller's recorded (a user's tokens with their
   * new password), once it committed: checked here at once, and told to the other instances
   * over Redis (the database tells them too).
   */
  recorded(records: readonly RevocationRecord[]): Promise<void>;
  isRevoked(jti: string): Promise<boolean>;
  /** The answer of the in-memory copy while it is complete, with no promise; undefined when isRevoked must ask the record. */
  isRevokedInMemory(jti: string): boolean | undefined;
  close(): void;
}

export interface RevocationStores {
  durable: Pick<DurableStore, 'revocations' | 'onChange'>;
  /** The fast path for news between instances; the record is durable. */
  ephemeral: EphemeralStore;
}

export function createRevocationList(stores: RevocationStores, clock: Clock, maxInMemory = DEFAULT_MAX_IN_MEMORY): RevocationList {
  const { durable, ephemeral } = stores;
  const revoked = new Map<string, number>();
  // The in-memory copy is complete: rebuilt from the record since the feed last reconnected,
  // and not over its size.
  let complete = false;
  let overflowed = false;
  let rebuilding = false;
  // Bumped whenever news may have been missed: a rebuild begun before cannot complete the copy.
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

  // Revocations an earlier version kept in Redis only are made durable when seen (an upgrade
  // must not bring revoked tokens back); those keys expire with their tokens.
  const adoptLegacyRecord = async () => {
    const legacy = await ephemeral.entries<number>(LEGACY_NS).catch(() => []);
    const tokens = legacy.filter((entry): entry is [string, number] => typeof entry[1] === 'number').map(([jti, exp]) => toRecord({ jti, exp }));
    if (tokens.length > 0) await durable.revocations.add(tokens, new Date(clock()));
  };

  const rebuild = async () => {
    const started = epoch;
    rebuilding = true;
    try {
      await adoptLegacyRecord();
      const record = await durable.revocations.live(new Date(clock()), maxInMemory + 1);
      if (started !== epoch) return;
      overflowed = false;
      for (const r of record) remember(fromRecord(r));
      complete = !overflowed;
    } catch {
      // The database is away: checks keep asking it (and fail) until the next rebuild succeeds.
    } finally {
      rebuilding = false;
    }
  };
  const resync = () => {
    complete = false;
    epoch += 1;
    void rebuild();
  };

  const stopDurable = durable.onChange((event) => {
    if (event.kind === 'revoked') remember(fromRecord(event));
    else if (event.kind === 'revocations') resync();
  });
  const stopEphemeral = ephemeral.channels.subscribe(CHANNEL, {
    message(message) {
      const token = parseRevoked(message);
      if (token) remember(token);
    },
    // Whether Redis listens decides nothing: the database's feed and record make the copy complete.
    listening() {},
  });
  resync();

  const pruner = setInterval(() => {
    const at = now();
    for (const [jti, exp] of revoked) if (exp <= at) revoked.delete(jti);
    // A failed rebuild is tried again; after an overflow, once there is room again.
    if (!complete && !rebuilding && (!overflowed || revoked.size < maxInMemory / 2)) void rebuild();
  }, PRUNE_INTERVAL_MS);
  pruner.unref();

  /** Tells the other instances over Redis; the database has told them already unless its feed is reconnecting. */
  const publish = async (tokens: readonly RevokedToken[]) => {
    await Promise.all(tokens.map((t) => ephemeral.channels.publish(CHANNEL, JSON.stringify({ jti: t.jti, exp: t.exp })))).catch(() => {});
  };

  return {
    async revoke(tokens) {
      const at = now();
      const live = tokens.filter((t) => t.exp > at);
      if (live.length === 0) return;
      await durable.revocations.add(live.map(toRecord), new Date(clock()));
      for (const t of live) remember(t);
      await publish(live);
    },
    async revokeUser(userId, reason) {
      const recorded = (await durable.revocations.revokeUser(userId, reason, new Date(clock()))).map(fromRecord);
      for (const t of recorded) remember(t);
      await publish(recorded);
    },
    async recorded(records) {
      const tokens = records.map(fromRecord);
      for (const t of tokens) remember(t);
      await publish(tokens);
    },
    async isRevoked(jti) {
      if (complete) return (revoked.get(jti) ?? 0) > now();
      return durable.revocations.isRevoked(jti, new Date(clock()));
    },
    isRevokedInMemory(jti) {
      return complete ? (revoked.get(jti) ?? 0) > now() : undefined;
    },
    close() {
      clearInterval(pruner);
      stopDurable();
      stopEphemeral();
    },
  };
}

const fromRecord = (r: Pick<RevocationRecord, 'key' | 'expiresAt'>): RevokedToken => ({ jti: r.key, exp: Math.floor(r.expiresAt.getTime() / 1000) });
const toRecord = (t: RevokedToken): RevocationRecord => ({ key: t.jti, expiresAt: new Date(t.exp * 1000) });

function parseRevoked(message: string): RevokedToken | undefined {
  try {
    const value = JSON.parse(message) as Partial<RevokedToken>;
    return typeof value.jti === 'string' && typeof value.exp === 'number' ? { jti: value.jti, exp: value.exp } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The key under which every access token of a refresh token family is revoked at once (the
 * database's idp_revoke_user_tokens writes the same, migration 2026-11-24-0004).
 */
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
  // Checked on every userinfo and introspection call: from memory without a promise each, usually.
  const ownInMemory = typeof claims.jti === 'string' ? list.isRevokedInMemory(claims.jti) : false;
  const familyInMemory = typeof claims.svc_fid === 'string' ? list.isRevokedInMemory(familyRevocationKey(claims.svc_fid)) : false;
  if (ownInMemory !== undefined && familyInMemory !== undefined) return ownInMemory || familyInMemory;
  const [own, family] = await Promise.all([
    typeof claims.jti === 'string' ? list.isRevoked(claims.jti) : false,
    typeof claims.svc_fid === 'string' ? list.isRevoked(familyRevocationKey(claims.svc_fid)) : false,
  ]);
  return own || family;
}

/** Revocations written in a caller's transaction, kept to be given to `RevocationList.recorded` once it committed. */
export interface RevocationsInTransaction extends Pick<RevocationList, 'revoke' | 'revokeUser'> {
  readonly written: RevocationRecord[];
}

/**
 * What revokes as the revocation list does, but on a transaction's handle: nothing is checked
 * here or told to the other instances until the caller, once committed, hands `written` to
 * `RevocationList.recorded` (the database tells the other instances by itself).
 */
export function revocationsInTransaction(tx: Pick<DurableStore, 'revocations'>, clock: Clock): RevocationsInTransaction {
  const written: RevocationRecord[] = [];
  return {
    written,
    async revoke(tokens) {
      const live = tokens.filter((t) => t.exp > Math.floor(clock() / 1000)).map(toRecord);
      if (live.length === 0) return;
      await tx.revocations.add(live, new Date(clock()));
      written.push(...live);
    },
    async revokeUser(userId, reason) {
      written.push(...(await tx.revocations.revokeUser(userId, reason, new Date(clock()))));
    },
  };
}
