/**
 * Recovery codes in the sign-in: the second-factor page's "Use a recovery code" form (judged
 * behind the same throttle as authenticator codes, code-forms.ts), and the "Continue" of the page
 * that showed new codes after enrolment. A code used is gone on every instance; the user is told
 * by mail and the audit records how many are left.
 */
import { useRecoveryCode } from '../../factors/recovery-codes.ts';
import { codeProblem, type CodeField, type CodeFormsDeps } from './code-forms.ts';
import type { BrowserRequest, FlowResult } from './flow-types.ts';
import type { Form } from './step-form-deps.ts';

const RECOVERY_CODE: CodeField = {
  field: 'recovery_code',
  step: 'recovery_code',
  wrong: 'That recovery code is not right, or was used already. Each code works once.',
};

export function createRecoveryForms(deps: CodeFormsDeps) {
  const { flow, openInteraction, renderStep } = deps;

  /** GET: the recovery code form, while the second factor is what the sign-in asks for. */
  async function view(browser: BrowserRequest, id: string): Promise<FlowResult> {
    const current = await flow.loadFlowState(await openInteraction(browser, id, null));
    if (current.step !== 'otp') return flow.advance(browser, current);
    return renderStep(current, {}, 'recovery');
  }

  async function recovery(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
    const current = await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token));
    const { pending } = current.interaction;
    const user = current.pendingUser;
    if (current.step !== 'otp' || !pending || !user) return flow.advance(browser, current);
    let left: { remaining: number } | undefined;
    const problem = await codeProblem(deps, browser, current, pending, RECOVERY_CODE, async () => {
      // The code used up, with its event, in one transaction.
      left = await deps.change(user.id, browser.audit, async (tx) => {
        const used = await useRecoveryCode({ ...deps.recoveryCodes, factors: tx.factors }, user.id, form.recovery_code ?? '');
        return { result: used, events: used ? [{ type: 'recovery_code_used' as const, user_id: user.id, remaining: used.remaining }] : [] };
      });
      return left !== undefined;
    });
    if (problem || !left) return renderStep(current, problem ?? {}, 'recovery');
    deps.notices.mail(user, 'recovery_code_used', `Recovery codes left: ${left.remaining}.`);
    const interaction = { ...current.interaction, pending: { ...pending, amr: [...pending.amr, 'mfa'] } };
    return flow.saveAndAdvance(browser, flow.withNextStep({ ...current, interaction }));
  }

  /** "Continue" on the page of new codes: the sign-in goes on where it stands. */
  async function shown(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
    return flow.advance(browser, await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token)));
  }

  return { view, recovery, shown };
}
