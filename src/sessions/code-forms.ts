/**
 * The second-factor forms: a TOTP code from the app (otp), and the first code of a new secret
 * (enrol). A code is judged behind the throttle, as passwords are (throttle.ts).
 */
import { epochSeconds } from '../clock.ts';
import { totpFactor } from '../store/records.ts';
import type { BrowserRequest, FlowResult, FlowState, SignInOutcome, StepFeedback } from './flow-types.ts';
import type { PendingSignIn } from './interaction.ts';
import { judgeAttempt, refusalMessage } from './password-form.ts';
import type { Form, OpenInteraction, RenderStep, StepFormsDeps } from './step-form-deps.ts';
import { acceptTotp } from './totp.ts';

interface CodeFormsDeps extends Pick<StepFormsDeps, 'flow' | 'mfa' | 'throttle' | 'canonicalAccountName' | 'deviceCookies'> {
  openInteraction: OpenInteraction;
  renderStep: RenderStep;
}

export function createCodeForms(deps: CodeFormsDeps) {
  const { flow, mfa, throttle, openInteraction, renderStep } = deps;

  /** Judges a TOTP code for the pending user, with the throttle; undefined when accepted. */
  async function codeProblem(browser: BrowserRequest, current: FlowState, pending: PendingSignIn, secret: string, code: string, wrong: string): Promise<StepFeedback | undefined> {
    const userId = pending.userId;
    // As for passwords: the attempt is taken before the code is judged (a wrong code keeps it).
    const device = deps.deviceCookies.recognise(pending.username, browser.cookie);
    const attempt = await throttle.attempt(pending.username, browser.address, { device });
    // Audit lines are about signing in: an enrolment is not one yet.
    const audit = (fields: SignInOutcome) => current.step === 'otp'
      && browser.audit({ type: 'sign_in', ...fields, user_id: userId, username: deps.canonicalAccountName(pending.username) });
    if ('refused' in attempt) {
      audit({ result: 'throttled', step: 'otp' });
      return { error: refusalMessage(attempt.refused === 'unrecognised-device' ? 'unrecognised-device' : 'throttled') };
    }
    const accepted = await judgeAttempt(attempt, () => acceptTotp(mfa.ephemeral, userId, secret, code, epochSeconds(flow.clock)));
    if (!accepted) {
      audit({ result: 'failure', step: 'otp', reason: 'wrong_code' });
      return { error: wrong, invalid: ['otp'] };
    }
    await attempt.giveBack();
    return undefined;
  }

  async function otp(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
    const current = await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token));
    const { pending } = current.interaction;
    const factor = current.pendingUser && totpFactor(current.pendingUser);
    if (current.step !== 'otp' || !pending || !current.pendingUser || !factor?.secretSealed) return flow.advance(browser, current);
    const secret = mfa.openUserSecret(current.pendingUser.id, factor.secretSealed);
    const problem = await codeProblem(browser, current, pending, secret, form.otp ?? '', 'That code is not right, or was used already. Enter the current code from your app.');
    if (problem) return renderStep(current, problem);
    await mfa.used(factor.id, new Date(flow.clock()));
    const interaction = { ...current.interaction, pending: { ...pending, amr: [...pending.amr, 'mfa'] } };
    return flow.saveAndAdvance(browser, flow.withNextStep({ ...current, interaction }));
  }

  async function enrol(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
    const current = await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token));
    const { pending } = current.interaction;
    if (current.step !== 'enrol' || !pending?.enrolSecretSealed || !current.pendingUser) return flow.advance(browser, current);
    const secret = mfa.openEnrolSecret(current.interaction.id, pending.enrolSecretSealed);
    const problem = await codeProblem(browser, current, pending, secret, form.otp ?? '', 'That code is not right. Enter the code your app shows now.');
    if (problem) return renderStep(current, problem);
    await mfa.enrol(current.pendingUser.id, secret);
    // The user now has the factor; with `mfa` in amr no second factor is owed either way.
    const interaction = { ...current.interaction, pending: { ...pending, amr: [...pending.amr, 'mfa'], enrolSecretSealed: null } };
    return flow.saveAndAdvance(browser, flow.withNextStep({ ...current, interaction }));
  }

  return { otp, enrol };
}
