/**
 * What the sign-in flow sees of a browser request, and what it answers (a FlowResult): a page,
 * a redirect, the client's response, the cookie to set. Routes turn these into HTTP
 * (routes/shared/flow-adapter.ts); nothing here knows HTTP.
 */
import type { SignIn } from '../../events/audit-events.ts';
import type { Audit } from '../../events/record.ts';
import type { ClientRecord, UserRecord } from '../../store/records.ts';
import type { AuthorizationTarget } from './authorization-request.ts';
import type { ClientResponse } from './authorization-response.ts';
import type { LoadedSession } from '../browser-session.ts';
import type { DeviceCookie } from '../device-cookie.ts';
import type { Interaction } from './interaction.ts';
import type { Step } from './steps.ts';
import type { Enrolment } from '../../factors/authenticator-app.ts';

export type { Enrolment } from '../../factors/authenticator-app.ts';

/** What the flow needs of the browser request it serves; the route binds it. */
/** What a sign-in step's audit event says of the attempt; the step adds who. */
export type SignInOutcome = Pick<SignIn, 'result' | 'step' | 'reason'>;

export interface BrowserRequest {
  /** The value of the session cookie, when the browser sent one. */
  sessionId: string | undefined;
  /** The source address (as IDP_TRUST_PROXY resolves it): the throttle counts it. */
  address: string;
  /** The browser's User-Agent header (cut short), kept with a session so its owner can recognise it. */
  userAgent: string;
  /** The value of a cookie the browser sent, by name (device cookies). */
  cookie(name: string): string | undefined;
  /** Records an audit event of this request. */
  audit: Audit;
  /** The authorization request is known: from now on, errors may go back to its client. */
  trust(target: AuthorizationTarget): void;
}

/** What a step's page shows besides the step: what was typed, and what went wrong. */
export interface StepFeedback {
  username?: string;
  error?: string;
  invalid?: string[];
  /** Something to tell that is no error (the password was changed). */
  notice?: string;
}

/**
 * The steps that have a page (a form posted to `{page}/{step}`); `recovery` is the second factor
 * by recovery code, `recovery-codes` the new codes shown once after enrolment.
 */
export type ShownStep = 'sign-in' | 'otp' | 'recovery' | 'enrol' | 'recovery-codes' | 'password' | 'consent';

/** A WebAuthn ceremony a page offers: the options for the browser, and where its answer is posted. */
export interface PasskeyCeremony {
  /** `get`: sign in with a passkey; `create`: register one. */
  mode: 'get' | 'create';
  action: string;
  /** PublicKeyCredential{Request,Creation}OptionsJSON, for the page's script. */
  options: object;
  /** The form asks for the passkey's name (`passkey_name`, "Add a passkey"); at enrolment it is named for the user. */
  named?: boolean;
}

export type FlowOutcome =
  /**
   * Show the page of `step` (with the enrolment secret, for enrol; the new codes, for
   * recovery-codes; with a passkey ceremony where one is offered).
   */
  | { kind: 'show-step'; step: ShownStep; action: string; state: FlowState; feedback: StepFeedback; enrolment?: Enrolment; recoveryCodes?: readonly string[]; passkey?: PasskeyCeremony }
  /** Send the browser on (303): to the page of the next step, or to the upstream provider. */
  | { kind: 'redirect'; location: string }
  /** Deliver the authorization response to the client. */
  | { kind: 'respond-to-client'; response: ClientResponse }
  /** Fail with `error` (an OAuthError or an outage), once the cookie is set. */
  | { kind: 'error'; error: unknown };

export interface FlowResult {
  outcome: FlowOutcome;
  /** A new browser session id for the cookie: a new visitor's, or the one a sign-in rotates to. */
  newSessionId?: string;
  /** A device cookie to set: the browser just signed in to its account. */
  deviceCookie?: DeviceCookie;
}

/** An interaction with the browser session it is bound to. */
export interface BoundInteraction {
  interaction: Interaction;
  loaded: LoadedSession;
}

/** Where an interaction stands, with everything read to decide it. */
export interface FlowState extends BoundInteraction {
  client: ClientRecord;
  /** The session's user as stored now; undefined when signed out. */
  user: UserRecord | undefined;
  /** The interaction's pending user. */
  pendingUser: UserRecord | undefined;
  /** Scopes the user consented to for this client before (read only for clients that ask consent). */
  consented: string[];
  step: Step;
}
