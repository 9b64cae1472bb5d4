/**
 * The passkey forms of the sign-in steps: "Use a passkey" on the second-factor page (an
 * assertion), and a passkey instead of the authenticator app on the enrolment page (a new
 * credential). The page's own script fills `passkey_response` with what the authenticator
 * answered. Each challenge belongs to the browser session and the interaction that showed the
 * page; a passkey sign-in counts as the second factor exactly as a code does (`mfa` in amr).
 */
import { REGISTERED_ALREADY, storePasskey, type Binding, type Passkeys } from '../../factors/passkeys.ts';
import { defaultPasskeyName } from '../../factors/passkey-management.ts';
import { passkeyFactors, type UserRecord } from '../../store/records.ts';
import { endEnrolment, storeEnrolment } from './enrolment-end.ts';
import type { BrowserRequest, FlowResult, FlowState, PasskeyCeremony } from './flow-types.ts';
import type { Interaction, PendingSignIn } from './interaction.ts';
import type { Form, OpenInteraction, RenderStep, StepFormsDeps } from './step-form-deps.ts';

/** The two forms, as posted to `/interaction/:id/{name}`. */
export const PASSKEY_FORMS = ['passkey', 'passkey-enrol'] as const;

const REFUSED = 'That passkey could not be used. Try again, or use another way to verify.';
const NOT_ENROLLED = 'The passkey was not set up. Try again, or use an authenticator app instead.';

interface PasskeyFormsDeps extends Pick<StepFormsDeps, 'flow' | 'canonicalAccountName' | 'interactions' | 'recoveryCodes' | 'notices' | 'change'> {
  passkeys: Passkeys;
  openInteraction: OpenInteraction;
  renderStep: RenderStep;
}

/** A ceremony's challenge belongs to the browser session that shows the page, for this interaction. */
export const bindingOf = (interaction: Interaction): Binding => ({ sessionKey: interaction.sessionKey, ceremony: interaction.id });

/** What the page of `step` offers with a passkey, if anything (a fresh challenge each time it is shown). */
export async function passkeyCeremony(passkeys: Passkeys, current: FlowState, step: string, action: string): Promise<PasskeyCeremony | undefined> {
  const user = current.pendingUser;
  if (!user || !current.interaction.pending || !passkeys.offered) return undefined;
  const binding = bindingOf(current.interaction);
  if (step === 'otp') {
    const own = passkeyFactors(user);
    if (own.length === 0) return undefined;
    return { mode: 'get', action: `${action}/passkey`, options: await passkeys.authenticationOptions(binding, user.id, own) };
  }
  if (step !== 'enrol') return undefined;
  const options = await passkeys.registrationOptions(binding, { id: user.id, username: user.username, displayName: user.name ?? user.username, passkeys: passkeyFactors(user) });
  return { mode: 'create', action: `${action}/passkey-enrol`, options };
}

export function createPasskeyForms(deps: PasskeyFormsDeps) {
  const { flow, passkeys, openInteraction, renderStep } = deps;

  /** The state with the second factor passed: `mfa` joins the methods, an enrolment secret is dropped. */
  const withSecondFactor = (current: FlowState, pending: PendingSignIn): FlowState =>
    flow.withNextStep({ ...current, interaction: { ...current.interaction, pending: { ...pending, amr: [...pending.amr, 'mfa'], enrolSecretSealed: null } } });

  async function passkey(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
    const current = await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token));
    const { pending } = current.interaction;
    const user: UserRecord | undefined = current.pendingUser;
    if (current.step !== 'otp' || !pending || !user || passkeyFactors(user).length === 0) return flow.advance(browser, current);
    const result = await passkeys.authenticate(bindingOf(current.interaction), user.id, form.passkey_response ?? '');
    if (!result.ok) {
      const username = deps.canonicalAccountName(pending.username);
      browser.audit({ type: 'sign_in', result: 'failure', step: 'passkey', reason: result.reason, user_id: user.id, username });
      if (result.reason === 'counter_regressed') {
        browser.audit({ type: 'passkey_counter_regressed', user_id: user.id, factor_id: result.factor.id, stored_count: result.stored, presented_count: result.presented });
      }
      return renderStep(current, { error: REFUSED });
    }
    return flow.saveAndAdvance(browser, withSecondFactor(current, pending));
  }

  async function enrol(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
    const current = await flow.loadFlowState(await openInteraction(browser, id, form.csrf_token));
    const { pending } = current.interaction;
    const user = current.pendingUser;
    if (current.step !== 'enrol' || !pending || !user) return flow.advance(browser, current);
    const verified = await passkeys.verifyRegistration(bindingOf(current.interaction), user.id, form.passkey_response ?? '');
    if (!verified.ok) return renderStep(current, { error: NOT_ENROLLED });
    const { stored, codes } = await storeEnrolment(deps, browser, user, async (tx) => {
      const stored = await storePasskey(tx.factors, user.id, verified.passkey, defaultPasskeyName(user));
      return { stored, added: stored.ok ? { kind: 'passkey' as const, first: stored.first } : undefined };
    });
    if (!stored.ok) return renderStep(current, { error: stored.reason === 'registered_already' ? REGISTERED_ALREADY : NOT_ENROLLED });
    // As for an authenticator app: the first second factor ends on the page of new recovery codes.
    return endEnrolment(deps, browser, withSecondFactor(current, pending), user, { kind: 'passkey', first: stored.first }, codes);
  }

  return { passkey, 'passkey-enrol': enrol };
}
