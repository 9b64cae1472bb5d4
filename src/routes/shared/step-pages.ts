/** The page of each sign-in step, with what its template needs (the field and button names the README's Pages section gives). */
import type { FastifyReply } from 'fastify';
import { recoveryCodesLeft } from '../../factors/recovery-codes.ts';
import type { Enrolment, FlowOutcome } from '../../sessions/sign-in/flow-types.ts';
import { passkeyFactors, totpFactor, type UserRecord } from '../../store/records.ts';
import { passwordRules } from '../../sources/password-policy.ts';
import { formActionSource, renderPage, type PageContext } from './pages.ts';
import { describeScopes } from './scope-descriptions.ts';

/** Why a password change is asked for: an administrator flagged the account, or the user is recovering it. */
const PASSWORD_CHANGE_REASON = 'Your administrator requires a new password for this account before you continue.';
const RECOVERY_REASON = 'Choose a new password for your account.';

/** Why the account page asks the signed-in user to sign in again. */
const CONFIRM_REASONS = {
  password: "Confirm it's you to change your password.",
  factors: "Confirm it's you to change your second factors.",
  account: "Confirm it's you to change your account.",
} as const;

/** What the enrolment page shows of an enrolment (the key in groups of four, as apps show it). */
export function enrolPageData(enrolment: Enrolment | undefined): Record<string, unknown> {
  return {
    qrSvg: enrolment?.qrSvg,
    otpauthUri: enrolment?.otpauthUri,
    account: enrolment?.account,
    issuer: enrolment?.issuer,
    secret: enrolment?.secret.replace(/(.{4})(?=.)/g, '$1 '),
  };
}

/** Where the sign-in page's "Forgot password?" leads for an interaction; undefined: no link. */
export type ForgotPasswordLink = ((interactionId: string) => string) | undefined;

/** The recovery code page's way back to the second-factor page: the app's code, or else a passkey. */
function otherFactor(user: UserRecord | undefined, pageUrl: string): { otpUrl?: string; otpLabel?: string } {
  if (user && totpFactor(user)) return { otpUrl: pageUrl, otpLabel: 'Use your authenticator app instead' };
  if (user && passkeyFactors(user).length > 0) return { otpUrl: pageUrl, otpLabel: 'Use a passkey instead' };
  return {};
}

export function renderStepPage(reply: FastifyReply, page: PageContext, shown: Extract<FlowOutcome, { kind: 'show-step' }>, forgotPassword?: ForgotPasswordLink): FastifyReply {
  const { step, action, state, feedback, enrolment, passkey } = shown;
  const { interaction, client, user, pendingUser } = state;
  // The interaction's page: its forms post to `{page}/{step}`, its other pages are below it.
  const pageUrl = action.slice(0, action.lastIndexOf('/'));
  const common = { csrfToken: interaction.csrfToken, clientName: client.displayName || client.clientId, action, passkey: passkey && { ...passkey, options: JSON.stringify(passkey.options) } };
  // Signing in ends in a redirect to the client: Chromium checks it against form-action.
  // The account page's own sign-in ends on this service's page: 'self' covers it.
  const options = { formActions: interaction.returnTo === undefined ? [formActionSource(interaction.request.redirectUri)] : [], script: passkey !== undefined };
  switch (step) {
    case 'consent':
      return renderPage(reply, page, 'consent', { ...common, userName: user?.name ?? user?.username ?? '', scopes: describeScopes(interaction.request.scopes) }, options);
    case 'otp':
      return renderPage(reply, page, 'otp', {
        ...common,
        passkeyOnly: passkey !== undefined && !(pendingUser && totpFactor(pendingUser)),
        recoveryUrl: pendingUser && recoveryCodesLeft(pendingUser) > 0 ? `${pageUrl}/recovery` : undefined,
        ...feedback,
      }, options);
    case 'recovery':
      return renderPage(reply, page, 'recovery', { ...common, ...otherFactor(pendingUser, pageUrl), ...feedback }, options);
    case 'recovery-codes':
      return renderPage(reply, page, 'recovery-codes', { ...common, codes: shown.recoveryCodes ?? [] }, { ...options, script: true });
    case 'password':
      return renderPage(reply, page, 'password', {
        ...common, reason: interaction.pending?.recovery ? RECOVERY_REASON : PASSWORD_CHANGE_REASON, rules: passwordRules(), ...feedback,
      }, options);
    case 'enrol':
      return renderPage(reply, page, 'enrol', { ...common, ...enrolPageData(enrolment), ...feedback }, options);
    default:
      return renderPage(reply, page, 'sign-in', {
        ...common, username: '', forgotPasswordUrl: forgotPassword?.(interaction.id), ...feedback,
        ...(interaction.confirm ? { username: interaction.confirm.username, usernameFixed: true, reason: CONFIRM_REASONS[interaction.confirm.purpose] } : {}),
      }, options);
  }
}
