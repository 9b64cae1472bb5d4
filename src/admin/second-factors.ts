/**
 * A user's second factors as administrators see them, and their reset: `idp users reset-mfa`
 * (and later the administration API) for someone who lost the phone and the recovery codes.
 */
import type { Clock } from '../clock.ts';
import type { FactorKind, FactorRecord, UserRecord } from '../store/records.ts';
import type { DurableStore } from '../store/types.ts';
import { AdminError } from './errors.ts';
import type { SecondFactorWire } from './wire-schemas.ts';

/** One factor as shown, by wire names; a user's recovery codes are one entry, with how many are left. */
export type FactorSummary = SecondFactorWire;

const latest = (dates: ReadonlyArray<Date | null>): Date | null =>
  dates.reduce<Date | null>((max, d) => (d !== null && (max === null || d > max) ? d : max), null);

/** The user's factors as administrators see them (never a secret or a hash). */
export function summariseFactors(user: Pick<UserRecord, 'factors'>): FactorSummary[] {
  const codes = user.factors.filter((f) => f.kind === 'recovery_code');
  const others = user.factors.filter((f) => f.kind !== 'recovery_code');
  const one = (f: FactorRecord): FactorSummary => ({ kind: f.kind, name: f.name, created_at: f.createdAt.toISOString(), last_used_at: f.lastUsedAt?.toISOString() ?? null });
  if (codes.length === 0) return others.map(one);
  const first = codes.reduce((a, b) => (b.createdAt < a.createdAt ? b : a));
  const used = latest(codes.map((c) => c.lastUsedAt));
  return [...others.map(one), { ...one(first), remaining: codes.length, last_used_at: used?.toISOString() ?? null }];
}

export interface FactorsReset {
  /** `unchanged`: the user had no second factor. */
  kind: 'reset' | 'unchanged';
  user: UserRecord;
  /** The kinds removed, each once. */
  removed: FactorKind[];
}

/**
 * Removes every second factor of the user (authenticator app, recovery codes, passkeys) in one
 * transaction, and flags the user to enrol again at the next sign-in; their refresh token
 * families and access tokens are revoked as for a lock, and browser sessions signed in with the
 * removed factor end (sessions/steps.ts). A user without a factor is left as they are.
 */
export async function resetSecondFactors(deps: { durable: DurableStore; clock: Clock }, user: UserRecord): Promise<FactorsReset> {
  const removed = await deps.durable.transaction(async (tx) => {
    const gone = await tx.factors.removeAllForUser(user.id);
    if (gone.length === 0) return gone;
    if (!(await tx.users.update(user.id, { mustEnrolMfa: true }))) throw new AdminError('not_found', `no user named ${user.username}`);
    // The flag's trigger revokes only when the flag changes: a user flagged already is revoked here.
    await tx.revocations.revokeUser(user.id, 'second factors reset', new Date(deps.clock()));
    return gone;
  });
  const kinds = [...new Set(removed.map((f) => f.kind))];
  if (kinds.length === 0) return { kind: 'unchanged', user, removed: [] };
  const stored = (await deps.durable.users.getById(user.id)) ?? { ...user, factors: [], mustEnrolMfa: true };
  return { kind: 'reset', user: stored, removed: kinds };
}
