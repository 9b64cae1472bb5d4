/**
 * The sign-in pages of an interaction: GET shows the page of the current step; each form posts
 * to its own action with the interaction's CSRF token, from the browser session it belongs to.
 * Steps: sign-in (password), otp (second factor), enrol (MFA enrolment), password (change), consent.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { epochSeconds } from '../clock.ts';
import { OAuthError } from '../errors.ts';
import type { LoadedSession, SessionStore } from '../sessions/browser-session.ts';
import { isSameBrowser, withFullLifetime, type Interaction, type InteractionStore } from '../sessions/interaction.ts';
import type { SignInAttempt, SignInThrottle } from '../sessions/throttle.ts';
import { acceptTotp } from '../sessions/totp.ts';
import type { SignInSource } from '../sources/types.ts';
import type { ConsentRepository } from '../store/types.ts';
import type { RequestAudit } from './shared/audit.ts';
import { readSessionCookie } from './shared/cookies.ts';
import { singleValued } from './shared/params.ts';
import type { SignInFlow } from './shared/sign-in-flow.ts';
import { createStepPages, type StepPages } from './shared/step-pages.ts';
import type { MfaSecrets } from '../sessions/mfa.ts';

export interface InteractionRouteOptions {
  pages: Omit<Parameters<typeof createStepPages>[0], 'flow' | 'mfa'>;
  secureCookies: boolean;
  interactions: InteractionStore;
  sessions: SessionStore;
  consents: ConsentRepository;
  source: SignInSource;
  /** With an upstream provider: sends the browser there for the sign-in step. */
  startUpstream?: (interaction: Interaction) => Promise<string>;
  throttle: SignInThrottle;
  mfa: MfaSecrets;
  /** Changes a password after the policy allows it; returns the problem to show, if any. */
  changePassword(userId: string, newPassword: string, confirm: string): Promise<string | undefined>;
  audit: RequestAudit;
  /** The account name a sign-in is about, as audit lines name it (sources/account-name.ts). */
  accountName(typed: string): string;
  flow: SignInFlow;
}

type IdParams = { Params: { id: string } };
type Loaded = { interaction: Interaction; loaded: LoadedSession };

const THROTTLED = 'Too many failed attempts. Wait a few minutes, then try again.';
const SIGN_IN_MESSAGES = {
  invalid_credentials: 'The username or password is incorrect.',
  locked: 'This account is locked. Contact your administrator.',
  unavailable: 'The directory is unavailable right now. Try again in a moment.',
} as const;

const expired = () => new OAuthError('invalid_request', 'This sign-in has expired or was already used. Start again from the application.', { redirectable: false });
const foreign = () => new OAuthError('invalid_request', 'This form was not sent from the browser that started the sign-in.', { redirectable: false });

/**
 * Runs `judge` for an attempt taken. An exception is no wrong guess (the sources fail before
 * checking, or after a right password), so the attempt goes back before it is passed on.
 */
async function judgeAttempt<T>(attempt: SignInAttempt, judge: () => Promise<T>): Promise<T> {
  try {
    return await judge();
  } catch (error) {
    await attempt.giveBack().catch(() => undefined);
    throw error;
  }
}

export async function interactionRoutes(app: FastifyInstance, options: InteractionRouteOptions): Promise<void> {
  const { interactions, sessions, consents, source, throttle, mfa, flow, accountName } = options;
  const pages: StepPages = createStepPages({ ...options.pages, flow, mfa });
  const config = { page: true };

  /** The interaction of the URL, from its own browser session (and, for posts, with its CSRF token). */
  async function load(request: FastifyRequest<IdParams>, csrfToken?: string | null): Promise<Loaded> {
    // Independent reads, asked together.
    const [interaction, loaded] = await Promise.all([
      interactions.load(request.params.id),
      sessions.loadBrowser(readSessionCookie(request, options.secureCookies)),
    ]);
    if (!interaction) throw expired();
    const sameBrowser = csrfToken === null ? loaded?.key === interaction.sessionKey : isSameBrowser(interaction, loaded?.key, csrfToken);
    if (!loaded || !sameBrowser) throw foreign();
    request.authorizationTarget = interaction.request;
    return { interaction, loaded };
  }

  /** Shows the sign-in page again, with what was typed and what went wrong. */
  async function signInAgain(reply: FastifyReply, { interaction, loaded }: Loaded, extra: Record<string, unknown>): Promise<unknown> {
    return pages.show(reply, { ...(await flow.state(interaction, loaded)), step: 'sign-in' }, extra);
  }

  /** A sign-in audit event, naming the account typed (never the password). */
  function auditSignIn(request: FastifyRequest, typed: string, fields: Record<string, unknown>): void {
    options.audit(request, 'sign_in', { ...fields, username: accountName(typed) });
  }

  /** Moves a changed interaction on to the next step (which saves it, or finishes it). */
  function proceed(reply: FastifyReply, interaction: Interaction, loaded: LoadedSession): Promise<unknown> {
    return flow.advance(reply, interaction, loaded, true);
  }

  app.get<IdParams>('/interaction/:id', { config }, async (request, reply) => {
    const { interaction, loaded } = await load(request, null);
    const current = await flow.state(interaction, loaded);
    if (current.step === 'done' || current.step === 'finish-sign-in') return flow.advance(reply, interaction, loaded);
    if (current.step === 'sign-in' && options.startUpstream) {
      return reply.header('cache-control', 'no-store').redirect(await options.startUpstream(interaction), 303);
    }
    return pages.show(reply, current);
  });

  app.post<IdParams>('/interaction/:id/sign-in', { config }, async (request, reply) => {
    const form = singleValued(request.body);
    const username = (form.username ?? '').trim();
    const loadedContext = await load(request, form.csrf_token);
    if (source.kind === 'oidc') throw new OAuthError('invalid_request', 'Sign-in happens at the sign-in provider.', { redirectable: false });
    // Someone is signing in: the interaction now lives its full time (it was short-lived while
    // only an anonymous request stood behind it). Saved here unless the next step saves it.
    const context = { ...loadedContext, interaction: withFullLifetime(loadedContext.interaction) };
    const keep = () => (context.interaction === loadedContext.interaction ? undefined : interactions.save(context.interaction));
    // Counted against the account, not the spelling: `alice`, `ALICE` and `EXAMPLE\alice` are one.
    const account = source.accountOf(username);
    // The attempt is taken before the password reaches any source, so that no more guesses than
    // the limit reach a directory, however many arrive at once. Only from a real interaction:
    // forms that lead nowhere do not use up anyone's attempts.
    const attempt = await throttle.attempt(account, request.ip);
    if (!attempt) {
      await keep();
      auditSignIn(request, username, { result: 'throttled', step: 'password' });
      return signInAgain(reply, context, { username, error: THROTTLED });
    }
    const result = await judgeAttempt(attempt, () => source.signIn(username, form.password ?? ''));
    if (!result.ok) {
      // Only guesses count: a locked account or a directory outage is not a wrong password.
      await Promise.all([result.reason === 'invalid_credentials' ? undefined : attempt.giveBack(), keep()]);
      auditSignIn(request, username, { result: 'failure', step: 'password', reason: result.reason });
      // Which of the two was wrong is not said; both fields point at the message.
      const invalid = result.reason === 'invalid_credentials' ? ['username', 'password'] : [];
      return signInAgain(reply, context, { username, error: SIGN_IN_MESSAGES[result.reason], invalid });
    }
    await attempt.giveBack();
    const pending = { userId: result.user.id, username: account, amr: result.amr, enrolSecretSealed: null };
    return proceed(reply, { ...context.interaction, pending }, context.loaded);
  });

  app.post<IdParams>('/interaction/:id/otp', { config }, async (request, reply) => {
    const form = singleValued(request.body);
    const context = await load(request, form.csrf_token);
    const current = await flow.state(context.interaction, context.loaded);
    const { pending } = context.interaction;
    if (current.step !== 'otp' || !pending || !current.pendingUser?.totpSecretSealed) return flow.advance(reply, context.interaction, context.loaded);
    const { id: userId, totpSecretSealed } = current.pendingUser;
    const secret = mfa.openUserSecret(userId, totpSecretSealed);
    // As for passwords: the attempt is taken before the code is judged (a wrong code keeps it).
    const attempt = await throttle.attempt(pending.username, request.ip);
    if (!attempt) {
      auditSignIn(request, pending.username, { result: 'throttled', step: 'otp', user_id: pending.userId });
      return pages.show(reply, current, { error: THROTTLED });
    }
    const accepted = await judgeAttempt(attempt, () => acceptTotp(mfa.ephemeral, userId, secret, form.otp ?? '', epochSeconds(flow.clock)));
    if (!accepted) {
      auditSignIn(request, pending.username, { result: 'failure', step: 'otp', reason: 'wrong_code', user_id: pending.userId });
      return pages.show(reply, current, { error: 'That code is not right, or was used already. Enter the current code from your app.', invalid: ['otp'] });
    }
    await attempt.giveBack();
    return proceed(reply, { ...context.interaction, pending: { ...pending, amr: [...pending.amr, 'mfa'] } }, context.loaded);
  });

  app.post<IdParams>('/interaction/:id/enrol', { config }, async (request, reply) => {
    const form = singleValued(request.body);
    const context = await load(request, form.csrf_token);
    const current = await flow.state(context.interaction, context.loaded);
    const { pending } = context.interaction;
    if (current.step !== 'enrol' || !pending?.enrolSecretSealed || !current.pendingUser) return flow.advance(reply, context.interaction, context.loaded);
    const userId = current.pendingUser.id;
    const secret = mfa.openEnrolSecret(context.interaction.id, pending.enrolSecretSealed);
    const attempt = await throttle.attempt(pending.username, request.ip);
    if (!attempt) return pages.show(reply, current, { error: THROTTLED });
    const accepted = await judgeAttempt(attempt, () => acceptTotp(mfa.ephemeral, userId, secret, form.otp ?? '', epochSeconds(flow.clock)));
    if (!accepted) return pages.show(reply, current, { error: 'That code is not right. Enter the code your app shows now.', invalid: ['otp'] });
    await attempt.giveBack();
    await mfa.enrol(userId, secret);
    return proceed(reply, { ...context.interaction, pending: { ...pending, amr: [...pending.amr, 'mfa'], enrolSecretSealed: null } }, context.loaded);
  });

  app.post<IdParams>('/interaction/:id/password', { config }, async (request, reply) => {
    const form = singleValued(request.body);
    const context = await load(request, form.csrf_token);
    const current = await flow.state(context.interaction, context.loaded);
    const { pending } = context.interaction;
    if (current.step !== 'password' || !pending || !current.pendingUser) return flow.advance(reply, context.interaction, context.loaded);
    const problem = await options.changePassword(current.pendingUser.id, form.new_password ?? '', form.confirm_password ?? '');
    if (problem) {
      // The confirmation is checked first: when the two differ, that is the field in error.
      const invalid = [(form.new_password ?? '') === (form.confirm_password ?? '') ? 'new_password' : 'confirm_password'];
      return pages.show(reply, current, { error: problem, invalid });
    }
    return proceed(reply, context.interaction, context.loaded);
  });

  app.post<IdParams>('/interaction/:id/consent', { config }, async (request, reply) => {
    const form = singleValued(request.body);
    const { interaction, loaded } = await load(request, form.csrf_token);
    const current = await flow.state(interaction, loaded);
    if (current.step !== 'consent' || !current.user) return flow.advance(reply, interaction, loaded);
    if (form.decision === 'deny') {
      await interactions.finish(interaction.id);
      throw new OAuthError('access_denied', 'The user denied the request.');
    }
    if (form.decision !== 'allow') throw new OAuthError('invalid_request', 'The decision must be allow or deny.', { redirectable: false });
    await consents.grant(current.user.id, current.client.clientId, interaction.request.scopes);
    return proceed(reply, { ...interaction, consentGiven: true }, loaded);
  });
}
