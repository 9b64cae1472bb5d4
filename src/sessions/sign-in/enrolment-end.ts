/**
 * An enrolment at sign-in, by authenticator app (code-forms.ts) or by passkey (passkey-forms.ts):
 * the factor is stored with its `mfa_added` event in one transaction, and the one that is the
 * user's first second factor comes with a new set of recovery codes (and their event) in it too;
 * once committed, the user is mailed, and the codes are shown this once on their own page. That
 * page's "Continue" (recovery-form.ts) goes on; so does any other way back to the interaction.
 */
import type { AuditEvent } from '../../events/audit-events.ts';
import { generateRecoveryCodes } from '../../factors/recovery-codes.ts';
import type { UserRecord } from '../../store/records.ts';
import type { DurableStore } from '../../store/types.ts';
import type { BrowserRequest, FlowResult, FlowState } from './flow-types.ts';
import type { StepFormsDeps } from './step-form-deps.ts';

export type EnrolmentEndDeps = Pick<StepFormsDeps, 'flow' | 'interactions' | 'recoveryCodes' | 'notices' | 'change'>;

/** What was added: its kind, and whether it is the user's first second factor. */
export interface AddedFactor {
  kind: 'totp' | 'passkey';
  first: boolean;
}

/** What storing a factor made: `added` when it stored one (else nothing is recorded), and the new recovery codes of a first one. */
export type Enrolled<T> = T & { added?: AddedFactor | undefined; codes?: string[] | undefined };

const ADDED: Record<AddedFactor['kind'], string> = { totp: 'An authenticator app was set up', passkey: 'A passkey was set up' };

/** Runs `store` (the factor's write, on the transaction) with the events of what it added, and the first factor's recovery codes, in one transaction. */
export async function storeEnrolment<T extends { added?: AddedFactor | undefined }>(deps: EnrolmentEndDeps, browser: BrowserRequest, user: UserRecord, store: (tx: DurableStore) => Promise<T>): Promise<Enrolled<T>> {
  return deps.change<Enrolled<T>>(user.id, browser.audit, async (tx) => {
    const stored = await store(tx);
    const { added } = stored;
    if (!added) return { result: stored, events: [] };
    const events: AuditEvent[] = [{ type: 'mfa_added', user_id: user.id, kind: added.kind }];
    if (!added.first) return { result: stored, events };
    const codes = await generateRecoveryCodes({ ...deps.recoveryCodes, factors: tx.factors }, user.id);
    events.push({ type: 'recovery_codes_generated', user_id: user.id, count: codes.length });
    return { result: { ...stored, codes }, events };
  });
}

/** `state`: the sign-in with the second factor passed, on to its next step, once `added` was stored (with `codes` for a first one). */
export async function endEnrolment(deps: EnrolmentEndDeps, browser: BrowserRequest, state: FlowState, user: UserRecord, added: AddedFactor, codes: string[] | undefined): Promise<FlowResult> {
  if (codes === undefined) {
    deps.notices.mail(user, 'mfa_added', `${ADDED[added.kind]}.`);
    return deps.flow.saveAndAdvance(browser, state);
  }
  deps.notices.mail(user, 'mfa_added', `${ADDED[added.kind]}, with ${codes.length} new recovery codes.`);
  await deps.interactions.save(state.interaction);
  const action = `${deps.flow.pageUrl(state.interaction)}/recovery-codes`;
  return { outcome: { kind: 'show-step', step: 'recovery-codes', action, state, feedback: {}, recoveryCodes: codes } };
}
