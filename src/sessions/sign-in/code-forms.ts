/**
 * The second-factor forms: a TOTP code from the app (otp), and the first code of a new secret
 * (enrol), which ends with the new recovery codes shown once (enrolment-end.ts). A code is judged behind the
 * throttle, as passwords are (throttle.ts); recovery codes are judged the same way
 * (recovery-form.ts).
 */
import { epochSeconds } from '../../clock.ts';
import { totpFactor } from '../../store/records.ts';
import type { BrowserRequest, FlowResult, FlowState, SignInOutcome, StepFeedback } from './flow-types.ts';
import { endEnrolment, storeEnrolment } from './enrolment-end.ts';
import type { PendingSignIn } from './interaction.ts';
import { judgeAttempt, refusalMessage } from './password-form.ts';
import type { Form, OpenInteraction, RenderStep, StepFormsDeps } from './step-form-deps.ts';
import { acceptTotp } from '../../factors/totp.ts';

export interface CodeFormsDeps extends Pick<StepFormsDeps, 'flow' | 'mfa' | 'throttle' | 'canonicalAccountName' | 'deviceCookies' | 'interactions' | 'recoveryCodes' | 'notices' | 'change'> {
  openInteraction: OpenInteraction;
  renderStep: RenderStep;
}

/** The field a second-factor form is typed in, and the audit step it is. */
export interface CodeField {
  field: 'otp' | 'recovery_code';
  step: 'otp' | 'recovery_code';
  /** What the page says of a wrong code. */
  wrong: string;
}

const APP_CODE: CodeField = { field: 'otp', step: 'otp', wrong: 'That code is not right, or was used already. Enter the current code from your app.' };
const ENROL_CODE: CodeField = { field: 'otp', step: 'otp', wrong: 'That code is not right. Enter the code your app shows now.' };

/**
 * Judges a second-factor code for the pending user with the throttle (every kind of code counts
 * against the same limits); undefined when `accept` took it.
 */
export async function codeProblem(deps: CodeFormsDeps, browser: BrowserRequest, current: FlowState, pending: PendingSignIn, code: CodeField, accept: () => Promise<boolean>): Promise<StepFeedback | undefined> {
  const userId = pending.userId;
  // As for passwords: the attempt is taken before the code is judged (a wrong code keeps it).
  const device = deps.deviceCookies.recognise(pending.username, browser.cookie);
  const attempt = await deps.throttle.attempt(pending.username, browser.address, { device });
  // Audit lines are about signing in: an enrolment is not one yet.
  const audit = (fields: SignInOutcome) => current.step === 'otp'
    && browser.audit({ type: 'sign_in', ...fields, user_id: userId, username: deps.canonicalAccountName(pending.username) });
  if ('refused' in attempt) {
    audit({ result: 'throttled', step: code.step });
    return { error: refusalMessage(attempt.refused === 'unrecognised-device' ? 'unrecognised-device' : 'throttled') };
  }
  const accepted = await judgeAttempt(attempt, accept);
  if (!accepted) {
    audit({ result: 'failure', step: code.step, reason: 'wrong_code' });
    return { error: code.wrong, invalid: [code.field] };
  }
  await attempt.giveBack();
  return undefined;
}

export function createCodeForms(deps: CodeFormsDeps) {
  const { flow, mfa, openInteraction, renderStep } = deps;

  async function otp(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
    const current = await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token));
    const { pending } = current.interaction;
    const factor = current.pendingUser && totpFactor(current.pendingUser);
    if (current.step !== 'otp' || !pending || !current.pendingUser || !factor?.secretSealed) return flow.advance(browser, current);
    const secret = mfa.openUserSecret(current.pendingUser.id, factor.secretSealed);
    const problem = await codeProblem(deps, browser, current, pending, APP_CODE, () => acceptTotp(mfa.ephemeral, pending.userId, secret, form.otp ?? '', epochSeconds(flow.clock)));
    if (problem) return renderStep(current, problem);
    await mfa.used(factor.id, new Date(flow.clock()));
    const interaction = { ...current.interaction, pending: { ...pending, amr: [...pending.amr, 'mfa'] } };
    return flow.saveAndAdvance(browser, flow.withNextStep({ ...current, interaction }));
  }

  /**
   * The first code of the new secret stores the authenticator app and a new set of recovery
   * codes; the codes are the answer to this post, shown this once. Their page's "Continue"
   * (recovery-form.ts) goes on; so does any other way back to the interaction.
   */
  async function enrol(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
    const current = await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token));
    const { pending } = current.interaction;
    const user = current.pendingUser;
    if (current.step !== 'enrol' || !pending?.enrolSecretSealed || !user) return flow.advance(browser, current);
    const secret = mfa.openEnrolSecret(current.interaction.id, pending.enrolSecretSealed);
    const problem = await codeProblem(deps, browser, current, pending, ENROL_CODE, () => acceptTotp(mfa.ephemeral, pending.userId, secret, form.otp ?? '', epochSeconds(flow.clock)));
    if (problem) return renderStep(current, problem);
    const added = { kind: 'totp' as const, first: true };
    // Another tab's enrolment was stored first: its codes stand, this one makes none to void them.
    const { codes } = await storeEnrolment(deps, browser, user, async (tx) => ({ added: (await mfa.enrol(user.id, secret, tx.factors)) ? added : undefined }));
    // The user now has the factor; with `mfa` in amr no second factor is owed either way.
    const interaction = { ...current.interaction, pending: { ...pending, amr: [...pending.amr, 'mfa'], enrolSecretSealed: null } };
    const state = flow.withNextStep({ ...current, interaction });
    if (!codes) return flow.saveAndAdvance(browser, state);
    return endEnrolment(deps, browser, state, user, added, codes);
  }

  return { otp, enrol };
}
