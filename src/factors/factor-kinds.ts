/**
 * The kinds of second factor, each described once (factor-kind.ts): what lists a user's factors
 * goes through these instead of a branch per kind.
 */
import type { FactorKind, UserRecord } from '../store/records.ts';
import { authenticatorAppKind } from './authenticator-app.ts';
import type { FactorEntry, FactorKindSpec } from './factor-kind.ts';
import { passkeyKind } from './passkey-management.ts';
import { recoveryCodeKind } from './recovery-codes.ts';

/** Every kind, in the order a list shows them when set up at the same moment. */
export const FACTOR_KINDS: readonly FactorKindSpec[] = [authenticatorAppKind, passkeyKind, recoveryCodeKind];

export function factorKind(kind: FactorKind): FactorKindSpec {
  const found = FACTOR_KINDS.find((k) => k.kind === kind);
  if (!found) throw new Error(`no second factor kind ${kind}`);
  return found;
}

/**
 * The user's second factors as listed: one entry per named factor by when it was set up, then
 * the entries standing for many rows (recovery codes: one, with how many are left).
 */
export function listFactors(user: Pick<UserRecord, 'factors'>): FactorEntry[] {
  const entries = FACTOR_KINDS.flatMap((k) => k.entries(user.factors.filter((f) => f.kind === k.kind)));
  const grouped = (e: FactorEntry) => (e.remaining === undefined ? 0 : 1);
  return entries.sort((a, b) => grouped(a) - grouped(b) || (grouped(a) === 0 ? a.createdAt.getTime() - b.createdAt.getTime() : 0));
}
