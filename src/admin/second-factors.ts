/**
 * A user's second factors as administrators see them, and their reset: `idp users reset-mfa`
 * (and later the administration API) for someone who lost the phone and the recovery codes.
 */
import { listFactors } from '../factors/factor-kinds.ts';
import type { FactorKind, UserRecord } from '../store/records.ts';
import { AdminError } from './errors.ts';
import { recordedChange, type ChangeActor, type ChangeDeps } from './recorded-change.ts';
import type { SecondFactorWire } from './answer-schemas.ts';

/** One factor as shown, by wire names; a user's recovery codes are one entry, with how many are left. */
export type FactorSummary = SecondFactorWire;

/** The user's factors as administrators see them (never a secret or a hash). */
export function summariseFactors(user: Pick<UserRecord, 'factors'>): FactorSummary[] {
  return listFactors(user).map((f) => ({
    kind: f.kind, name: f.name, created_at: f.createdAt.toISOString(), last_used_at: f.lastUsedAt?.toISOString() ?? null,
    ...(f.remaining !== undefined ? { remaining: f.remaining } : {}),
  }));
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
 * removed factor end (sessions/sign-in/steps.ts). A user without a factor is left as they are.
 */
export async function resetSecondFactors(deps: ChangeDeps, user: UserRecord, actor: ChangeActor): Promise<FactorsReset> {
  return recordedChange<FactorsReset>(deps, actor, `user ${user.username}`, async (tx) => {
    const gone = await tx.factors.removeAllForUser(user.id);
    if (gone.length === 0) return { result: { kind: 'unchanged', user, removed: [] } };
    const flagged = await tx.users.change(user.id, { mustEnrolMfa: true });
    if (!flagged) throw new AdminError('not_found', `no user named ${user.username}`);
    // The flag's trigger revokes only when the flag changes: a user flagged already is revoked here.
    await tx.revocations.revokeUser(user.id, 'second factors reset', new Date(deps.clock()));
    const removed = [...new Set(gone.map((f) => f.kind))];
    return {
      result: { kind: 'reset', user: flagged.record, removed },
      events: [{ type: 'mfa_removed', user_id: user.id, kinds: removed, actor: actor.by.actor }],
      change: { action: 'update', resource: 'user', resource_id: user.subject, fields: ['second_factors', 'must_enrol_mfa'] },
    };
  });
}
