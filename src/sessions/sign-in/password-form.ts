/**
 * The sign-in page's form: a username and password, judged by the sign-in source behind the
 * throttle (throttle.ts), then the pending user goes on to the steps they still owe.
 */
import { OAuthError } from '../../errors.ts';
import { withFullLifetime } from './interaction.ts';
import type { BoundInteraction, BrowserRequest, FlowResult, SignInOutcome, StepFeedback } from './flow-types.ts';
import type { SignInFlow } from './sign-in-flow.ts';
import type { Refusal, SignInAttempt } from '../throttle.ts';
import type { Form, OpenInteraction, RenderStep, StepFormsDeps } from './step-form-deps.ts';

export const THROTTLED = 'Too many failed attempts. Wait a few minutes, then try again.';
/** The account is closed to unrecognised devices for now (throttle.ts): a known device still signs in. */
export const UNRECOGNISED_DEVICE = 'Too many attempts for this account from unrecognised devices. Try again later, or from a device you have signed in from before.';
const REFUSALS = { throttled: THROTTLED, 'unrecognised-device': UNRECOGNISED_DEVICE } as const;
const SIGN_IN_MESSAGES = {
  invalid_credentials: 'The username or password is incorrect.',
  locked: 'This account is locked. Contact your administrator.',
  unavailable: 'The directory is unavailable right now. Try again in a moment.',
} as const;

/** What the page says of a refused guess (an interaction used up never gets that far). */
export const refusalMessage = (refused: Exclude<Refusal, 'interaction-used-up'>) => REFUSALS[refused];

const usedUp = () => new OAuthError('invalid_request', 'Too many attempts in this sign-in. Start again from the application.', { redirectable: false });

/**
 * Runs `judge` for an attempt taken. An exception is no wrong guess (the sources fail before
 * checking, or after a right password), so the attempt goes back before it is passed on.
 */
export async function judgeAttempt<T>(attempt: SignInAttempt, judge: () => Promise<T>): Promise<T> {
  try {
    return await judge();
  } catch (error) {
    await attempt.giveBack().catch(() => undefined);
    throw error;
  }
}

interface PasswordFormDeps extends Pick<StepFormsDeps, 'interactions' | 'source' | 'throttle' | 'canonicalAccountName' | 'deviceCookies'> {
  flow: SignInFlow;
  openInteraction: OpenInteraction;
  renderStep: RenderStep;
}

export function createPasswordForm(deps: PasswordFormDeps) {
  const { flow, source } = deps;

  /** The sign-in page again, with what was typed and what went wrong. */
  const signInAgain = async (bound: BoundInteraction, feedback: StepFeedback) => deps.renderStep(await flow.loadFlowState(bound), feedback, 'sign-in');

  async function signIn(browser: BrowserRequest, id: string, form: Form): Promise<FlowResult> {
    const opened = await deps.openInteraction(browser, id, form.csrf_token);
    // Confirming who is signed in: the account is the signed-in one, whatever was posted.
    const username = opened.interaction.confirm?.username ?? (form.username ?? '').trim();
    if (source.kind === 'oidc') throw new OAuthError('invalid_request', 'Sign-in happens at the sign-in provider.', { redirectable: false });
    // Someone is signing in: the interaction now lives its full time (it was short-lived while
    // only an anonymous request stood behind it). Saved here unless the next step saves it.
    const bound = { ...opened, interaction: withFullLifetime(opened.interaction) };
    const keep = () => (bound.interaction === opened.interaction ? undefined : deps.interactions.save(bound.interaction));
    /** A sign-in audit event, naming the account typed (never the password). */
    const audit = (fields: SignInOutcome) => browser.audit({ type: 'sign_in', ...fields, username: deps.canonicalAccountName(username) });
    // Counted against the account, not the spelling: `alice`, `ALICE` and `EXAMPLE\alice` are one.
    const account = source.canonicalAccountName(username);
    // The attempt is taken before the password reaches any source, so that no more guesses than
    // the limit reach a directory, however many arrive at once. Only from a real interaction:
    // forms that lead nowhere do not use up anyone's attempts. A browser that signed in to the
    // account before counts on its own; one interaction takes a bounded number of passwords.
    const device = deps.deviceCookies.recognise(account, browser.cookie);
    const attempt = await deps.throttle.attempt(account, browser.address, { device, interaction: bound.interaction.id });
    if ('refused' in attempt) {
      audit({ result: 'throttled', step: 'password' });
      if (attempt.refused === 'interaction-used-up') {
        await deps.interactions.finish(bound.interaction.id);
        throw usedUp();
      }
      await keep();
      return signInAgain(bound, { username, error: refusalMessage(attempt.refused) });
    }
    const result = await judgeAttempt(attempt, () => source.signIn(username, form.password ?? ''));
    if (!result.ok) {
      // Only guesses count: a locked account or a directory outage is not a wrong password.
      await Promise.all([result.reason === 'invalid_credentials' ? undefined : attempt.giveBack(), keep()]);
      audit({ result: 'failure', step: 'password', reason: result.reason });
      // Which of the two was wrong is not said; both fields point at the message.
      const invalid = result.reason === 'invalid_credentials' ? ['username', 'password'] : [];
      return signInAgain(bound, { username, error: SIGN_IN_MESSAGES[result.reason], invalid });
    }
    // The user who gave the right password is pending: on to what they still owe. The source
    // just read the user (not read again). Giving the attempt back needs nothing of the rest,
    // and is asked at once, whatever happens next: without a read in between (the usual case),
    // it leaves for the store in the same write as what finishing the sign-in stores.
    const pending = { userId: result.user.id, username: account, amr: result.amr, enrolSecretSealed: null };
    const continueSignIn = async () => flow.saveAndAdvance(browser, await flow.loadFlowState({ ...bound, interaction: { ...bound.interaction, pending } }, { pendingUser: result.user }));
    const [next] = await Promise.all([continueSignIn(), attempt.giveBack()]);
    return next;
  }

  return { signIn };
}
