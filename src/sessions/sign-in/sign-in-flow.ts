/**
 * Moves an interaction forward: decides the next step (steps.ts) and either sends the browser
 * to the page for it or completes the authorization with a code for the client. No HTTP here:
 * each function returns what the browser is to be answered (a FlowResult) for a route to send.
 * What a request has read (the client, the users, the consents) is carried in a FlowState and
 * handed on, never read a second time.
 */
import type { Clock } from '../../clock.ts';
import { epochSeconds } from '../../clock.ts';
import { OAuthError } from '../../errors.ts';
import type { ClientRecord, UserRecord } from '../../store/records.ts';
import type { ConsentRepository, EphemeralStore, EphemeralWrite, UserRepository } from '../../store/types.ts';
import type { AuthorizationRequest } from './authorization-request.ts';
import type { LoadedSession, NewSession, SessionStore } from '../browser-session.ts';
import type { DeviceCookies } from '../device-cookie.ts';
import { ACCOUNT_CLIENT, accountSignInRequest } from './account-sign-in.ts';
import { completeAuthorization } from './complete-authorization.ts';
import type { BoundInteraction, BrowserRequest, FlowResult, FlowState } from './flow-types.ts';
import type { AccountConfirmation, Interaction, InteractionStore, PendingSignIn } from './interaction.ts';
import { nextStep } from './steps.ts';
import type { SignInThrottle } from '../throttle.ts';

export interface SignInFlowDeps {
  issuer: string;
  basePath: string;
  clock: Clock;
  clients: { get(clientId: string): Promise<ClientRecord | undefined> };
  users: Pick<UserRepository, 'getById'>;
  consents: Pick<ConsentRepository, 'get'>;
  sessions: SessionStore;
  interactions: InteractionStore;
  ephemeral: EphemeralStore;
  throttle: Pick<SignInThrottle, 'successWrite'>;
  /** Makes the browser known for the account it signed in to. */
  deviceCookies: Pick<DeviceCookies, 'issue'>;
  /** The account name a sign-in is about, as audit lines name it (sources/account-name.ts). */
  canonicalAccountName(typed: string): string;
}

export function createSignInFlow(deps: SignInFlowDeps) {
  const now = () => epochSeconds(deps.clock);

  const consentsOf = async (client: ClientRecord, user: UserRecord | undefined): Promise<string[]> =>
    user && client.requireConsent ? deps.consents.get(user.id, client.clientId) : [];

  /** The state with its step decided again (after a change made in this request). */
  function withNextStep(state: Omit<FlowState, 'step'>): FlowState {
    return { ...state, step: nextStep({ ...state, session: state.loaded.session, now: now() }) };
  }

  /**
   * Where the interaction stands (a disabled client ends it with unauthorized_client). A
   * `pendingUser` the caller just read (a sign-in's result) is not read again.
   */
  async function loadFlowState({ interaction, loaded }: BoundInteraction, known: { pendingUser?: UserRecord } = {}): Promise<FlowState> {
    const client = interaction.returnTo !== undefined ? ACCOUNT_CLIENT : await deps.clients.get(interaction.request.clientId);
    if (!client?.enabled) throw new OAuthError('unauthorized_client', 'The client is disabled.');
    const userId = loaded.session.userId;
    const pendingId = interaction.pending?.userId;
    const [user, pendingRead] = await Promise.all([
      userId ? deps.users.getById(userId) : undefined,
      pendingId && !known.pendingUser && pendingId !== userId ? deps.users.getById(pendingId) : undefined,
    ]);
    const pendingUser = !pendingId ? undefined : (known.pendingUser ?? (pendingId === userId ? user : pendingRead));
    return withNextStep({ interaction, loaded, client, user, pendingUser, consented: await consentsOf(client, user) });
  }

  /**
   * Starts an interaction for an authorization request in the browser's session. A browser
   * without one gets a cookie with a new id, but nothing is stored for it: a session is written
   * only at sign-in, and an anonymous visitor's interaction is short-lived (interaction.ts).
   */
  async function begin(browser: BrowserRequest, request: AuthorizationRequest, returnTo?: string, confirm?: AccountConfirmation): Promise<FlowResult> {
    const loaded = await deps.sessions.loadBrowser(browser.sessionId);
    if (loaded) return start(browser, request, loaded, returnTo, confirm);
    const { sid, key, session } = deps.sessions.create();
    return withCookie(sid, () => start(browser, request, { key, session }, returnTo, confirm));
  }

  async function start(browser: BrowserRequest, request: AuthorizationRequest, loaded: LoadedSession, returnTo: string | undefined, confirm: AccountConfirmation | undefined): Promise<FlowResult> {
    const { interaction, write } = deps.interactions.create(request, loaded.key, loaded.session.userId === null, returnTo, confirm);
    await deps.ephemeral.write([write]);
    return continueFlow(browser, await loadFlowState({ interaction, loaded }), false);
  }

  /**
   * The pending user passed every step: the browser session becomes theirs, under a new id
   * (an id planted before sign-in is worthless: no session fixation). Not yet written.
   */
  function rotation({ loaded }: FlowState, pending: PendingSignIn, browser: BrowserRequest): NewSession {
    const signedInAt = now();
    const sameUser = loaded.session.userId === pending.userId;
    return deps.sessions.rotation(loaded, {
      userId: pending.userId,
      authTime: signedInAt,
      amr: pending.amr,
      clients: sameUser ? loaded.session.clients : [],
      createdAt: signedInAt,
      upstreamIdToken: pending.upstreamIdToken,
      device: { userAgent: browser.userAgent, address: browser.address },
    });
  }

  /** Where the interaction stands once the session is the pending user's: their user record is the one read already. */
  async function signedInState(current: FlowState, rotated: NewSession): Promise<FlowState> {
    const user = current.pendingUser;
    const sameUser = current.user !== undefined && current.user.id === user?.id;
    return withNextStep({
      ...current,
      interaction: { ...current.interaction, sessionKey: rotated.key, signedInAt: rotated.session.authTime, pending: null },
      loaded: { key: rotated.key, session: rotated.session },
      user,
      pendingUser: undefined,
      consented: sameUser ? current.consented : await consentsOf(current.client, user),
    });
  }

  /** An error after a new session id was decided is an outcome: the cookie is set all the same. */
  async function withCookie(sid: string, next: () => Promise<FlowResult>): Promise<FlowResult> {
    try {
      return { newSessionId: sid, ...(await next()) };
    } catch (error) {
      return { outcome: { kind: 'error', error }, newSessionId: sid };
    }
  }

  function pageUrl(interaction: Interaction): string {
    return `${deps.basePath}/interaction/${encodeURIComponent(interaction.id)}`;
  }

  /**
   * Goes on from `current`, whose interaction is `changed` since it was stored (or not): signs
   * the pending user in once every step is passed, then sends the browser to the page of the
   * next step, or completes. What this changes is written in one batch.
   */
  async function continueFlow(browser: BrowserRequest, current: FlowState, changed: boolean): Promise<FlowResult> {
    const pending = current.step === 'finish-sign-in' ? current.interaction.pending : null;
    if (!pending) return completeOrRedirect(current, [], changed);
    const rotated = rotation(current, pending, browser);
    return withCookie(rotated.sid, async () => {
      const writes = [...rotated.writes, deps.throttle.successWrite(pending.username, browser.address)];
      const result = await completeOrRedirect(await signedInState(current, rotated), writes, true);
      browser.audit({ type: 'sign_in', result: 'success', username: deps.canonicalAccountName(pending.username), user_id: pending.userId, amr: pending.amr });
      // An upstream provider's sign-in guesses no password here: no device to know.
      return pending.amr.includes('external') ? result : { ...result, deviceCookie: deps.deviceCookies.issue(pending.username) };
    });
  }

  /** Completes, or saves the interaction (when `save`) and sends the browser to its next page. */
  async function completeOrRedirect(current: FlowState, writes: EphemeralWrite[], save: boolean): Promise<FlowResult> {
    const { returnTo } = current.interaction;
    // The account page's sign-in issues no code: the interaction ends, the browser goes back.
    if (current.step === 'done' && returnTo !== undefined) {
      await deps.interactions.finishWith(current.interaction.id, { deleted: writes, missing: writes });
      return { outcome: { kind: 'redirect', location: returnTo } };
    }
    if (current.step === 'done') return { outcome: { kind: 'respond-to-client', response: await completeAuthorization(deps, current, writes) } };
    const all = save ? [...writes, deps.interactions.saveWrite(current.interaction)] : writes;
    if (all.length > 0) await deps.ephemeral.write(all);
    return { outcome: { kind: 'redirect', location: pageUrl(current.interaction) } };
  }

  return {
    begin,
    /**
     * Signs the browser in for the account page (account-sign-in.ts), then back to `returnTo`;
     * `confirm` asks the signed-in user for the password (and second factor) again, for a change.
     */
    beginAccount: (browser: BrowserRequest, returnTo: string, confirm?: AccountConfirmation) =>
      begin(browser, accountSignInRequest(returnTo, confirm !== undefined), returnTo, confirm),
    loadFlowState,
    withNextStep,
    pageUrl,
    clock: deps.clock,
    /** Goes on from a state whose interaction is as stored: nothing to save but what the step changes. */
    advance: (browser: BrowserRequest, current: FlowState) => continueFlow(browser, current, false),
    /** Goes on from a state whose interaction was changed in this request: it is saved (or finished). */
    saveAndAdvance: (browser: BrowserRequest, current: FlowState) => continueFlow(browser, current, true),
  };
}

export type SignInFlow = ReturnType<typeof createSignInFlow>;
