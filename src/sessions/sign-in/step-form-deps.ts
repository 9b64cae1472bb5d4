/**
 * What the step forms (step-forms.ts, password-form.ts, code-forms.ts) are given: the services
 * they share, and the two functions step-forms.ts lends the others. Its own module, so that the
 * forms import it rather than each other.
 */
import type { AccountChange } from '../../factors/account-change.ts';
import type { Passkeys } from '../../factors/passkeys.ts';
import type { RecoveryCodeDeps } from '../../factors/recovery-codes.ts';
import type { SecurityNotices } from '../../mail/security-notices.ts';
import type { SignInSource } from '../../sources/types.ts';
import type { ConsentRepository, UserRepository } from '../../store/types.ts';
import type { SessionStore } from '../browser-session.ts';
import type { DeviceCookies } from '../device-cookie.ts';
import type { BoundInteraction, BrowserRequest, FlowResult, FlowState, ShownStep, StepFeedback } from './flow-types.ts';
import type { Interaction, InteractionStore } from './interaction.ts';
import type { MfaSecrets } from '../../factors/authenticator-app.ts';
import type { SignInFlow } from './sign-in-flow.ts';
import type { SignInThrottle } from '../throttle.ts';
import type { AfterPasswordChange, ChangeOwnPassword } from '../password-changed.ts';

export interface StepFormsDeps {
  flow: SignInFlow;
  interactions: InteractionStore;
  sessions: Pick<SessionStore, 'loadBrowser'>;
  consents: Pick<ConsentRepository, 'grant'>;
  source: SignInSource;
  throttle: SignInThrottle;
  /** Which browsers signed in to an account before (their guesses count on their own). */
  deviceCookies: Pick<DeviceCookies, 'recognise'>;
  mfa: MfaSecrets;
  recoveryCodes: RecoveryCodeDeps;
  /** Each change of the user's factors with its events, in one transaction. */
  change: AccountChange;
  /** Mail to the user of a second factor added, a recovery code used. */
  notices: SecurityNotices;
  /** Passkey ceremonies (factors/passkeys.ts), and the users whose enrolment flag a passkey clears. */
  passkeys: Passkeys;
  users: Pick<UserRepository, 'update'>;
  /** Changes a password after the policy allows it, with its event; returns the problem to show, if any. */
  changePassword: ChangeOwnPassword;
  /**
   * After a new password was taken (and the user's tokens revoked): ends the user's other
   * browser sessions, tells them by mail. `sessionKey`: this browser's.
   */
  passwordChanged: AfterPasswordChange;
  /** The account name a sign-in is about, as audit lines name it (sources/account-name.ts). */
  canonicalAccountName(typed: string): string;
  /** With an upstream provider: where to send the browser for the sign-in step. */
  startUpstream?: (interaction: Interaction) => Promise<string>;
}

/** A posted form's fields (single values; routes/shared/params.ts). */
export type Form = Record<string, string>;

/**
 * The interaction of the URL, from its own browser session; a form post (`csrfToken` not null)
 * must carry its CSRF token too (null: a page shown by GET).
 */
export type OpenInteraction = (browser: BrowserRequest, id: string, csrfToken: string | null | undefined) => Promise<BoundInteraction>;

/** The page of `step` (by default the current one), with what was typed and what went wrong. */
export type RenderStep = (current: FlowState, feedback: StepFeedback, step?: ShownStep) => Promise<FlowResult>;
