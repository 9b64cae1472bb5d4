/**
 * The pages of an interaction and the forms they post, without HTTP: each function takes the
 * form's fields and returns what to answer (a FlowResult). GET shows the page of the current
 * step; each form posts with the interaction's CSRF token, from the browser session it belongs
 * to. Steps: sign-in (password), otp (second factor, by code or passkey; recovery, by recovery
 * code), enrol (MFA enrolment, an app or a passkey; recovery-codes, the new codes shown once),
 * password (change), consent. What the request read is read once (sign-in-flow.ts FlowState).
 */
import { OAuthError } from '../../errors.ts';
import { totpFactor } from '../../store/records.ts';
import { trustRequestOf } from './account-sign-in.ts';
import { isSameBrowser } from './interaction.ts';
import { enrolmentOf } from '../../factors/authenticator-app.ts';
import { createCodeForms } from './code-forms.ts';
import type { BoundInteraction, BrowserRequest, FlowResult, FlowState, ShownStep, StepFeedback } from './flow-types.ts';
import { createPasskeyForms, passkeyCeremony } from './passkey-forms.ts';
import { createPasswordForm } from './password-form.ts';
import { createRecoveryForms } from './recovery-form.ts';
import type { Form, StepFormsDeps } from './step-form-deps.ts';
import type { Step } from './steps.ts';

const expired = () => new OAuthError('invalid_request', 'This sign-in has expired or was already used. Start again from the application.', { redirectable: false });
const foreign = () => new OAuthError('invalid_request', 'This form was not sent from the browser that started the sign-in.', { redirectable: false });

/** The page a step is shown on: its own, or the sign-in page for a step that has none. */
const pageOf = (step: Step): ShownStep => POSTED_STEPS.find((shown) => shown === step) ?? 'sign-in';

export function createStepForms(deps: StepFormsDeps) {
  const { flow, mfa } = deps;

  /**
   * The interaction of the URL, from its own browser session; a form post (`csrfToken` not
   * null) must carry its CSRF token too.
   */
  async function openInteraction(browser: BrowserRequest, id: string, csrfToken: string | null | undefined): Promise<BoundInteraction> {
    // Independent reads, asked together.
    const [interaction, loaded] = await Promise.all([deps.interactions.load(id), deps.sessions.loadBrowser(browser.sessionId)]);
    if (!interaction) throw expired();
    const sameBrowser = csrfToken === null ? loaded?.key === interaction.sessionKey : isSameBrowser(interaction, loaded?.key, csrfToken);
    if (!loaded || !sameBrowser) throw foreign();
    trustRequestOf(browser, interaction);
    return { interaction, loaded };
  }

  /** The enrolment secret of this interaction, made (and kept) on first display. */
  async function enrolmentSecret({ interaction }: FlowState): Promise<string> {
    const pending = interaction.pending;
    if (!pending) throw new Error('enrolment without a pending sign-in');
    if (pending.enrolSecretSealed) return mfa.openEnrolSecret(interaction.id, pending.enrolSecretSealed);
    const { secret, sealed } = mfa.startEnrolment(interaction.id);
    await deps.interactions.save({ ...interaction, pending: { ...pending, enrolSecretSealed: sealed } });
    return secret;
  }

  /** The page of `step` (by default the current one), with what was typed and what went wrong. */
  async function renderStep(current: FlowState, feedback: StepFeedback = {}, asked = pageOf(current.step)): Promise<FlowResult> {
    const passkey = await passkeyCeremony(deps.passkeys, current, asked, flow.pageUrl(current.interaction));
    // Without an authenticator app, and without a passkey this page can offer (removed, recovery
    // codes kept), a recovery code is the factor left.
    const step = asked === 'otp' && !passkey && current.pendingUser && !totpFactor(current.pendingUser) ? 'recovery' : asked;
    const action = `${flow.pageUrl(current.interaction)}/${step}`;
    const outcome = { kind: 'show-step', step, action, state: current, feedback, ...(passkey ? { passkey } : {}) } as const;
    if (step !== 'enrol') return { outcome };
    const enrolment = await enrolmentOf(mfa, current.pendingUser?.username ?? '', await enrolmentSecret(current));
    return { outcome: { ...outcome, enrolment } };
  }

  const password = createPasswordForm({ ...deps, openInteraction, renderStep });
  const codes = createCodeForms({ ...deps, openInteraction, renderStep });
  const recovery = createRecoveryForms({ ...deps, openInteraction, renderStep });
  const passkeys = createPasskeyForms({ ...deps, openInteraction, renderStep });

  return {
    /** GET: the page of the current step (or on, when there is none to show). */
    async view(browser: BrowserRequest, id: string): Promise<FlowResult> {
      const current = await flow.loadFlowState(await openInteraction(browser, id, null));
      if (current.step === 'done' || current.step === 'finish-sign-in') return flow.advance(browser, current);
      if (current.step === 'sign-in' && deps.startUpstream) {
        return { outcome: { kind: 'redirect', location: await deps.startUpstream(current.interaction) } };
      }
      return renderStep(current);
    },

    /** GET: the recovery code form of the second-factor step. */
    viewRecovery: recovery.view,

    'sign-in': password.signIn,
    otp: codes.otp,
    recovery: recovery.recovery,
    enrol: codes.enrol,
    'recovery-codes': recovery.shown,
    ...passkeys,

    async password(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
      const current = await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token));
      const { pendingUser } = current;
      if (current.step !== 'password' || !current.interaction.pending || !pendingUser) return flow.advance(browser, current);
      const { recovery, ...pending } = current.interaction.pending;
      const problem = await deps.changePassword(pendingUser.id, form.new_password ?? '', form.confirm_password ?? '', recovery ? 'recovery' : 'required_change', browser.audit);
      if (problem) {
        // The confirmation is checked first: when the two differ, that is the field in error.
        const invalid = [(form.new_password ?? '') === (form.confirm_password ?? '') ? 'new_password' : 'confirm_password'];
        return renderStep(current, { error: problem, invalid });
      }
      await deps.passwordChanged(pendingUser, current.loaded.key);
      // After a recovery the new password stands for the password (CONTRACT: the user never types
      // it, nor the second factor just given, twice in a row): signed in with `pwd` (and `mfa`).
      const signingIn = recovery ? { ...pending, amr: ['pwd', ...pending.amr.filter((method) => method !== 'pwd')] } : pending;
      const interaction = { ...current.interaction, pending: signingIn };
      return flow.saveAndAdvance(browser, flow.withNextStep({ ...current, interaction, pendingUser: { ...pendingUser, mustChangePassword: false } }));
    },

    async consent(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
      const current = await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token));
      const { interaction, user, client } = current;
      if (current.step !== 'consent' || !user) return flow.advance(browser, current);
      if (form.decision === 'deny') {
        await deps.interactions.finish(interaction.id);
        throw new OAuthError('access_denied', 'The user denied the request.');
      }
      if (form.decision !== 'allow') throw new OAuthError('invalid_request', 'The decision must be allow or deny.', { redirectable: false });
      await deps.consents.grant(user.id, client.clientId, interaction.request.scopes);
      // What the store now holds: consent adds to what was consented before.
      const consented = [...new Set([...current.consented, ...interaction.request.scopes])];
      return flow.saveAndAdvance(browser, flow.withNextStep({ ...current, interaction: { ...interaction, consentGiven: true }, consented }));
    },
  };
}

export type StepForms = ReturnType<typeof createStepForms>;
/** The forms a route posts to `/interaction/:id/{name}`. */
export const POSTED_STEPS = ['sign-in', 'otp', 'recovery', 'enrol', 'recovery-codes', 'password', 'consent'] as const satisfies readonly ShownStep[];
