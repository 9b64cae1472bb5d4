/**
 * Recovery codes: ten one-time codes a user keeps for the day the authenticator app is gone. Each
 * is 10 characters of a 32-character alphabet (50 bits), shown in groups (`k7xq-2mfp-9d`), and
 * stored only as a keyed hash (HMAC-SHA-256 under the key derived from the master secret for
 * 'recovery-codes', over the user's id and the code): a copy of the database alone guesses
 * nothing, and a code hashed under a previous master secret (IDP_SECRET_PREVIOUS) still works
 * during a rotation, since a typed code is looked up by its hash under every secret in force.
 */
import { createHmac, randomInt } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Audit } from '../events/record.ts';
import { hasSecondFactor, type FactorRecord, type UserRecord } from '../store/records.ts';
import type { FactorRepository } from '../store/types.ts';
import { keysOf, type Keyring } from '../tokens/secret-box.ts';
import type { AccountChange } from './account-change.ts';
import type { SecurityNotices } from '../mail/security-notices.ts';
import type { FactorEntry, FactorKindSpec } from './factor-kind.ts';

/** How many codes a set holds. */
export const RECOVERY_CODE_COUNT = 10;
/** The name every recovery code's row carries. */
export const RECOVERY_CODE_NAME = 'Recovery code';

/**
 * Crockford's base32, lower case: no i, l, o or u. What looks like one of those is read as the
 * digit it resembles, so a code copied from paper by eye still works.
 */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
const LENGTH = 10;
const LOOK_ALIKES: Record<string, string> = { o: '0', i: '1', l: '1' };

export interface RecoveryCodeDeps {
  /** The 'recovery-codes' keyring: the current key hashes new codes, every key finds typed ones. */
  keys: Keyring;
  factors: Pick<FactorRepository, 'replaceRecoveryCodes' | 'consumeRecoveryCode'>;
  clock: Clock;
}

/** A new code as it is shown: `k7xq-2mfp-9d`. */
function newCode(): string {
  const chars = Array.from({ length: LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
  return `${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8)}`;
}

/**
 * A typed code as it is hashed: case, hyphens and spaces do not count, look-alikes are read as
 * digits. Undefined when it cannot be a code at all.
 */
export function normaliseRecoveryCode(typed: string): string | undefined {
  const plain = typed.toLowerCase().replace(/[\s-]+/g, '').replace(/[oil]/g, (c) => LOOK_ALIKES[c] ?? c);
  return plain.length === LENGTH && [...plain].every((c) => ALPHABET.includes(c)) ? plain : undefined;
}

function hashCode(key: Buffer, userId: string, normalised: string): string {
  // Bound to the user: the same code of another user has another hash.
  return createHmac('sha256', key).update(`${userId}:${normalised}`).digest('base64url');
}

/**
 * Makes a new set of codes for the user and returns them, to be shown once: the previous set
 * stops working in the same statement. Throws when the user does not exist (nothing is written).
 */
export async function generateRecoveryCodes(deps: RecoveryCodeDeps, userId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
  const hashes = codes.map((code) => hashCode(deps.keys.current, userId, normaliseRecoveryCode(code) as string));
  // Fifty bits each: a repeat within a set is so unlikely that the unique index refusing it is enough.
  await deps.factors.replaceRecoveryCodes(userId, hashes, RECOVERY_CODE_NAME);
  return codes;
}

/**
 * Uses up the typed code if it is one of the user's (once, whoever else sends it at the same
 * time, on any instance); returns how many codes are left, or undefined when it is no code of
 * theirs or was used already.
 */
export async function useRecoveryCode(deps: RecoveryCodeDeps, userId: string, typed: string): Promise<{ remaining: number } | undefined> {
  const normalised = normaliseRecoveryCode(typed);
  if (normalised === undefined) return undefined;
  const candidates = keysOf(deps.keys).map((key) => hashCode(key, userId, normalised));
  return deps.factors.consumeRecoveryCode(userId, candidates, new Date(deps.clock()));
}

/**
 * A user's unused codes, listed as one entry: when the oldest was made, when one was last used,
 * how many are left. Single codes are never shown, only counted.
 */
function recoveryCodeEntries(rows: readonly FactorRecord[]): FactorEntry[] {
  if (rows.length === 0) return [];
  const first = rows.reduce((a, b) => (b.createdAt < a.createdAt ? b : a));
  const used = rows.reduce<Date | null>((max, r) => (r.lastUsedAt !== null && (max === null || r.lastUsedAt > max) ? r.lastUsedAt : max), null);
  return [{ kind: 'recovery_code', name: first.name, createdAt: first.createdAt, lastUsedAt: used, remaining: rows.length }];
}

export const recoveryCodeKind: FactorKindSpec = { kind: 'recovery_code', label: 'Recovery codes', entries: recoveryCodeEntries };

/** How many unused recovery codes the user has (read with the user). */
export function recoveryCodesLeft(user: Pick<UserRecord, 'factors'>): number {
  return user.factors.filter((factor) => factor.kind === 'recovery_code').length;
}

/**
 * "Generate new codes" (the account page): a new set, to be shown once, with its audit event (in
 * its transaction) and the user's mail; the old set no longer works. Undefined, and nothing
 * stored, for a user without an authenticator app or passkey: a recovery code stands in for one,
 * and codes alone would make every sign-in ask for one.
 */
export async function regenerateRecoveryCodes(deps: RecoveryCodeDeps & { notices: SecurityNotices; change: AccountChange }, user: Pick<UserRecord, 'id' | 'email' | 'factors'>, audit: Audit): Promise<string[] | undefined> {
  if (!hasSecondFactor(user)) return undefined;
  const codes = await deps.change(user.id, audit, async (tx) => {
    const codes = await generateRecoveryCodes({ ...deps, factors: tx.factors }, user.id);
    return { result: codes, events: [{ type: 'recovery_codes_generated' as const, user_id: user.id, count: codes.length }] };
  });
  deps.notices.mail(user, 'recovery_codes_generated');
  return codes;
}
