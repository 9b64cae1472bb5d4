/**
 * A user's removal of one of their own second factors, whatever its kind (the account page's
 * authenticator app and passkeys): the one place that decides it. Only an administrator's
 * `idp users reset-mfa` (admin/second-factors.ts) takes a user's last factor.
 */
import type { Audit } from '../events/record.ts';
import { STANDING_FACTOR_KINDS, type FactorRecord, type UserRecord } from '../store/records.ts';
import type { AccountChange } from './account-change.ts';
import type { SecurityNotices } from '../mail/security-notices.ts';

export type FactorRemoval = 'removed' | 'not_found' | 'last_second_factor';

/** Where a removal is decided and told: the store (with its event, in one transaction), the user's mail. */
export interface RemovalDeps {
  change: AccountChange;
  notices: SecurityNotices;
  audit: Audit;
}

/**
 * Removes `factor` (the user's own act: audited `mfa_removed` with actor `user`, and mailed with
 * `notice`). Never the user's last authenticator app or passkey: every user who has set up a
 * second factor keeps one (there is no setting that turns MFA off for a user or a deployment, a
 * stolen password with a live session must not strip it, and an administrator's requirement
 * stays met); to change factors a user adds the new one first. Recovery codes only stand in for
 * a factor, so they do not count. The store decides it with the user's row locked, not from this
 * possibly stale copy of the user: of two removals at once of the last two factors, one is refused.
 */
export async function removeOwnFactor(deps: RemovalDeps, user: Pick<UserRecord, 'id' | 'email'>, factor: FactorRecord, notice: string): Promise<FactorRemoval> {
  const result = await deps.change(user.id, deps.audit, async (tx) => {
    const removed = await tx.factors.removeUnlessLast(user.id, factor.id, STANDING_FACTOR_KINDS);
    return { result: removed, events: removed === 'removed' ? [{ type: 'mfa_removed' as const, user_id: user.id, kinds: [factor.kind], actor: 'user' as const }] : [] };
  });
  if (result === 'last') return 'last_second_factor';
  if (result === 'not_found') return 'not_found';
  deps.notices.mail(user, 'mfa_removed', notice);
  return 'removed';
}
