/** The page of each sign-in step, with what its template needs (CONTRACT section 5 names). */
import type { FastifyReply } from 'fastify';
import type { InteractionStore } from '../../sessions/interaction.ts';
import type { MfaSecrets } from '../../sessions/mfa.ts';
import { passwordRules } from '../../sources/password-policy.ts';
import { formActionSource, renderPage, type PageContext } from './pages.ts';
import { describeScopes } from './scope-descriptions.ts';
import type { FlowState, SignInFlow } from './sign-in-flow.ts';

export interface StepPagesDeps {
  page: PageContext;
  interactions: InteractionStore;
  flow: SignInFlow;
  mfa: MfaSecrets;
}

/** The one reason a password change is asked for: an administrator flagged the account. */
const PASSWORD_CHANGE_REASON = 'Your administrator requires a new password for this account before you continue.';

export function createStepPages(deps: StepPagesDeps) {
  /** The enrolment secret of this interaction, made (and kept) on first display. */
  async function enrolmentSecret(current: FlowState): Promise<string> {
    const { interaction } = current;
    const pending = interaction.pending;
    if (!pending) throw new Error('enrolment without a pending sign-in');
    if (pending.enrolSecretSealed) return deps.mfa.openEnrolSecret(interaction.id, pending.enrolSecretSealed);
    const { secret, sealed } = deps.mfa.startEnrolment(interaction.id);
    await deps.interactions.save({ ...interaction, pending: { ...pending, enrolSecretSealed: sealed } });
    return secret;
  }

  async function show(reply: FastifyReply, current: FlowState, extra: Record<string, unknown> = {}): Promise<unknown> {
    const { interaction, client, step } = current;
    const url = deps.flow.pageUrl(interaction);
    const clientName = client.displayName || client.clientId;
    const common = { csrfToken: interaction.csrfToken, clientName };
    // Signing in ends in a redirect to the client: Chromium checks it against form-action.
    const options = { formActions: [formActionSource(interaction.request.redirectUri)] };
    switch (step) {
      case 'consent':
        return renderPage(reply, deps.page, 'consent', {
          ...common,
          action: `${url}/consent`,
          userName: current.user?.name ?? current.user?.username ?? '',
          scopes: describeScopes(interaction.request.scopes),
        }, options);
      case 'otp':
        return renderPage(reply, deps.page, 'otp', { ...common, action: `${url}/otp`, ...extra }, options);
      case 'password':
        return renderPage(reply, deps.page, 'password', {
          ...common, action: `${url}/password`, reason: PASSWORD_CHANGE_REASON, rules: passwordRules(), ...extra,
        }, options);
      case 'enrol': {
        const secret = await enrolmentSecret(current);
        const account = current.pendingUser?.username ?? '';
        return renderPage(reply, deps.page, 'enrol', {
          ...common,
          action: `${url}/enrol`,
          qrSvg: await deps.mfa.qrSvg(account, secret),
          secret: secret.replace(/(.{4})(?=.)/g, '$1 '),
          ...extra,
        }, options);
      }
      default:
        return renderPage(reply, deps.page, 'sign-in', { ...common, action: `${url}/sign-in`, username: '', ...extra }, options);
    }
  }

  return { show };
}

export type StepPages = ReturnType<typeof createStepPages>;
