/**
 * The "Forgot password" pages without HTTP: the request form and the code form, each with a
 * CSRF token bound to the browser session (csrf.ts), and, after the right code, the sign-in
 * steps of the authorization request the recovery was asked from: the interaction's own second
 * factor and password pages (step-forms.ts), so every second factor a sign-in offers is offered
 * here too. The browser that types the code need not be the one that asked (the link may be
 * opened on a phone): it gets an interaction of its own for the same authorization request.
 * Opened without a sign-in page of this browser behind it (a bookmark, a help desk's link), the
 * recovery is the account page's: it ends there.
 */
import { OAuthError } from '../errors.ts';
import type { Audit } from '../events/record.ts';
import type { UserRepository } from '../store/types.ts';
import type { Keyring } from '../tokens/secret-box.ts';
import { accountSignInRequest } from './account-sign-in.ts';
import type { LoadedSession, SessionStore } from './browser-session.ts';
import { isValidSessionCsrfToken, sessionCsrfToken } from './csrf.ts';
import type { BrowserRequest, FlowResult } from './flow-types.ts';
import { withFullLifetime, type InteractionStore, type PendingSignIn } from './interaction.ts';
import { THROTTLED } from './password-form.ts';
import type { CodeCheck, PasswordRecovery, RecoveryOrigin } from './password-recovery.ts';
import type { SignInFlow } from './sign-in-flow.ts';

const CSRF_PURPOSE = 'password-recovery';

export interface RecoveryFlowDeps {
  recovery: PasswordRecovery;
  flow: SignInFlow;
  interactions: Pick<InteractionStore, 'load' | 'create'>;
  sessions: Pick<SessionStore, 'loadBrowser' | 'create'>;
  users: Pick<UserRepository, 'getById'>;
  csrfKey: Keyring;
  canonicalAccountName(typed: string): string;
  /** The account page: where a recovery asked from no sign-in page ends. */
  accountPath: string;
}

/** A page's browser session, made (with a cookie to set) when the browser has none. */
export interface FormSession {
  loaded: LoadedSession;
  newSessionId?: string;
  csrfToken: string;
}

const PROBLEMS: Record<Exclude<CodeCheck, { ok: true }>['problem'], string> = {
  malformed: 'Enter the 8-digit code from the message we sent you.',
  wrong: 'That code is not right. Check the latest message we sent you and try again.',
  expired: 'This code has expired, was used already, or was replaced by a newer one. Ask for a new code.',
  'used-up': 'Too many wrong codes: this code no longer works. Ask for a new code.',
  throttled: THROTTLED,
};

const forged = () => new OAuthError('invalid_request', 'This form was not sent from this browser, or it has expired. Open the page again.', { redirectable: false });
const gone = () => new OAuthError('invalid_request', 'This account can no longer be recovered. Start again from the application.', { redirectable: false });

export function createRecoveryFlow(deps: RecoveryFlowDeps) {
  /** The browser's session and the forms' CSRF token. */
  async function formSession(browser: BrowserRequest): Promise<FormSession> {
    const loaded = await deps.sessions.loadBrowser(browser.sessionId);
    if (loaded) return { loaded, csrfToken: sessionCsrfToken(deps.csrfKey, loaded.key, CSRF_PURPOSE) };
    const { sid, ...fresh } = deps.sessions.create();
    return { loaded: fresh, newSessionId: sid, csrfToken: sessionCsrfToken(deps.csrfKey, fresh.key, CSRF_PURPOSE) };
  }

  /** A posted form's session, when its CSRF token is this browser's; else the post is refused. */
  async function postedSession(browser: BrowserRequest, csrfToken: string | undefined): Promise<LoadedSession> {
    const loaded = await deps.sessions.loadBrowser(browser.sessionId);
    if (!loaded || !isValidSessionCsrfToken(deps.csrfKey, loaded.key, CSRF_PURPOSE, csrfToken)) throw forged();
    return loaded;
  }

  /** The authorization request whose sign-in page linked here, when it is this browser's; else the account page's. */
  async function originOf(loaded: LoadedSession, interactionId: string | undefined): Promise<RecoveryOrigin> {
    const interaction = interactionId ? await deps.interactions.load(interactionId) : undefined;
    if (!interaction || interaction.sessionKey !== loaded.key) {
      // Ends at the account page, saying what changed.
      const returnTo = `${deps.accountPath}?done=password`;
      return { request: accountSignInRequest(returnTo, false), interactionId: null, returnTo };
    }
    return { request: interaction.request, interactionId: interaction.id, returnTo: interaction.returnTo ?? null };
  }

  /**
   * After the right code: the user is pending in the interaction of the recovery's authorization
   * request (this browser's, or a new one), owing their second factor and a new password.
   */
  async function continueWithSteps(browser: BrowserRequest, loaded: LoadedSession, userId: string, origin: RecoveryOrigin): Promise<FlowResult> {
    const [user, asked] = await Promise.all([deps.users.getById(userId), origin.interactionId ? deps.interactions.load(origin.interactionId) : undefined]);
    if (!user || !origin.request) throw gone();
    let interaction = asked?.sessionKey === loaded.key ? asked : undefined;
    interaction ??= deps.interactions.create(origin.request, loaded.key, false, origin.returnTo ?? undefined).interaction;
    browser.trust(interaction.request);
    const pending: PendingSignIn = { userId, username: deps.canonicalAccountName(user.username), amr: [], enrolSecretSealed: null, recovery: true };
    const bound = { interaction: { ...withFullLifetime(interaction), pending }, loaded };
    return deps.flow.saveAndAdvance(browser, await deps.flow.loadFlowState(bound, { pendingUser: user }));
  }

  return {
    formSession,
    postedSession,
    originOf,
    /** Posts the request form: the code form's recovery id, whatever was typed. */
    async request(browser: BrowserRequest, form: Record<string, string>): Promise<{ recoveryId: string; interactionId: string | null }> {
      const loaded = await postedSession(browser, form.csrf_token);
      const origin = await originOf(loaded, form.interaction);
      return { recoveryId: await deps.recovery.request(form.identifier ?? '', origin, browser.audit), interactionId: origin.interactionId };
    },
    /**
     * An administrator's "Send password reset": the account's code is mailed as if its user had
     * asked (the same limits); the code's form ends at the account page.
     */
    async requestFor(username: string, audit: Audit): Promise<void> {
      const returnTo = `${deps.accountPath}?done=password`;
      await deps.recovery.request(username, { request: accountSignInRequest(returnTo, false), interactionId: null, returnTo }, audit);
    },
    /** What the mailed link's page says before anything is typed: undefined when the code can still be used. */
    async linkProblem(recoveryId: string): Promise<string | undefined> {
      return (await deps.recovery.isLive(recoveryId)) ? undefined : PROBLEMS.expired;
    },
    /** Posts the code form: on to the steps, or what is wrong with the code. */
    async enterCode(browser: BrowserRequest, form: Record<string, string>): Promise<FlowResult | { error: string }> {
      const loaded = await postedSession(browser, form.csrf_token);
      const checked = await deps.recovery.checkCode(form.recovery ?? '', form.code ?? '', browser.address);
      if (!checked.ok) return { error: PROBLEMS[checked.problem] };
      return continueWithSteps(browser, loaded, checked.userId, checked.origin);
    },
  };
}

export type RecoveryFlow = ReturnType<typeof createRecoveryFlow>;
