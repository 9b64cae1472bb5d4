/**
 * The end of an enrolment at sign-in, by authenticator app (code-forms.ts) or by passkey
 * (passkey-forms.ts): the factor added is audited and mailed, and the one that is the user's
 * first second factor comes with a new set of recovery codes, shown this once on their own page.
 * That page's "Continue" (recovery-form.ts) goes on; so does any other way back to the interaction.
 */
import { generateRecoveryCodes } from '../../factors/recovery-codes.ts';
import type { UserRecord } from '../../store/records.ts';
import type { BrowserRequest, FlowResult, FlowState } from './flow-types.ts';
import type { StepFormsDeps } from './step-form-deps.ts';

export type EnrolmentEndDeps = Pick<StepFormsDeps, 'flow' | 'interactions' | 'recoveryCodes' | 'notices'>;

/** What was added: its kind, and whether it is the user's first second factor. */
export interface AddedFactor {
  kind: 'totp' | 'passkey';
  first: boolean;
}

const ADDED: Record<AddedFactor['kind'], string> = { totp: 'An authenticator app was set up', passkey: 'A passkey was set up' };

/** `state`: the sign-in with the second factor passed, on to its next step. */
export async function endEnrolment(deps: EnrolmentEndDeps, browser: BrowserRequest, state: FlowState, user: UserRecord, added: AddedFactor): Promise<FlowResult> {
  browser.audit({ type: 'mfa_added', user_id: user.id, kind: added.kind });
  if (!added.first) {
    deps.notices.mail(user, 'mfa_added', `${ADDED[added.kind]}.`);
    return deps.flow.saveAndAdvance(browser, state);
  }
  const codes = await generateRecoveryCodes(deps.recoveryCodes, user.id);
  browser.audit({ type: 'recovery_codes_generated', user_id: user.id, count: codes.length });
  deps.notices.mail(user, 'mfa_added', `${ADDED[added.kind]}, with ${codes.length} new recovery codes.`);
  await deps.interactions.save(state.interaction);
  const action = `${deps.flow.pageUrl(state.interaction)}/recovery-codes`;
  return { outcome: { kind: 'show-step', step: 'recovery-codes', action, state, feedback: {}, recoveryCodes: codes } };
}
