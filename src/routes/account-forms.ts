/**
 * The account page's forms. Each post comes from a signed-in browser session with the page's
 * CSRF token (else it is refused and nothing changes); a security change (password, second
 * factors) also needs a sign-in within the last few minutes, else the browser is sent to sign in
 * again first. A change ends in a redirect to the page with a notice; a refusal shows the page
 * (or the set-up page) again with what went wrong.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError } from '../errors.ts';
import { presentedClientId } from '../events/audit-events.ts';
import { recorderOf } from '../events/in-transaction.ts';
import type { SignedIn } from '../sessions/account/signed-in.ts';
import { canChangePassword } from '../sessions/account/security.ts';
import type { BrowserRequest, Enrolment } from '../sessions/sign-in/flow-types.ts';
import type { AccountServices } from '../composition/account.ts';
import type { RateLimiter } from '../sessions/rate-limiters.ts';
import type { SignInFlow } from '../sessions/sign-in/sign-in-flow.ts';
import type { AccountMessage, AccountSection, ConfirmedAction } from './account-messages.ts';
import { passkeyFormRoutes } from './account-passkey-forms.ts';
import { profileFormRoutes } from './account-profile-forms.ts';
import type { FlowAdapter } from './shared/flow-adapter.ts';
import { renderPage, type PageContext } from './shared/pages.ts';
import { singleValued, type Params } from './shared/params.ts';
import { enrolPageData } from './shared/step-pages.ts';

export interface AccountRouteOptions extends AccountServices {
  flow: SignInFlow;
  /** IDP_AUTHORIZE_RATE_LIMIT per source address: starting a sign-in stores an interaction, as an authorization request does. */
  rateLimiter: RateLimiter;
  adapter: FlowAdapter;
  page: PageContext;
}

interface AccountFormOptions extends AccountRouteOptions {
  accountPath: string;
  show(reply: FastifyReply, signedIn: SignedIn, extra?: { emailCode?: string; message?: AccountMessage }): Promise<FastifyReply>;
}

type Handler = (signedIn: SignedIn, form: Params, browser: BrowserRequest, reply: FastifyReply) => Promise<FastifyReply>;

const foreignForm = () =>
  new OAuthError('invalid_request', 'This form has expired or was not sent from your account page. Open the account page again.', { redirectable: false });

export async function accountFormRoutes(app: FastifyInstance, options: AccountFormOptions): Promise<void> {
  const { account, adapter, page, accountPath, show } = options;
  const config = { page: true };
  const seeOther = (reply: FastifyReply, location: string) => reply.header('cache-control', 'no-store').redirect(location, 303);
  const done = (reply: FastifyReply, notice: string) => seeOther(reply, `${accountPath}?done=${notice}`);

  /** The page again, with a refusal next to the form of `section`. */
  const refuse = (reply: FastifyReply, signedIn: SignedIn, section: AccountSection, refusal: { error: string; invalid: string[] }) =>
    show(reply, signedIn, { message: { section, kind: 'error', text: refusal.error, invalid: refusal.invalid } });

  /**
   * Registers a form: a `confirm` one (a security change) needs a recent sign-in, else it is asked
   * for first; a signed-out browser goes to `signedOut`.
   */
  function form(path: string, confirm: ConfirmedAction | null, handler: Handler, signedOut = accountPath): void {
    app.post(`/account${path}`, { config }, async (request: FastifyRequest, reply) => {
      const browser = adapter.browserRequest(request);
      const signedIn = await account.base.signedIn(browser.sessionId);
      // Signed out meanwhile: the page signs in again; nothing was posted that could change anything.
      if (!signedIn) return seeOther(reply, signedOut);
      const fields = singleValued(request.body);
      if (!account.base.validCsrf(signedIn, fields.csrf_token)) throw foreignForm();
      if (confirm && !account.base.isRecent(signedIn)) return seeOther(reply, `${accountPath}/sign-in-again?for=${confirm}`);
      return handler(signedIn, fields, browser, reply);
    });
  }

  /** The set-up page of the authenticator app, posting its first code (and the sealed secret) back. */
  const showEnrolment = (reply: FastifyReply, signedIn: SignedIn, enrolment: Enrolment, sealed: string, problem?: { error: string; invalid: string[] }) =>
    renderPage(reply, page, 'enrol', {
      ...enrolPageData(enrolment),
      action: `${accountPath}/totp/confirm`,
      csrfToken: account.base.csrfToken(signedIn),
      fields: [{ name: 'enrolment', value: sealed }],
      cancelUrl: accountPath,
      ...problem,
    }, { status: problem ? 400 : 200 });

  form('/password', 'password', async (signedIn, fields, browser, reply) => {
    // Directory and upstream accounts: their password is changed where it is kept.
    if (!canChangePassword(signedIn)) throw new OAuthError('invalid_request', 'The password of this account is not kept by this service.', { redirectable: false });
    const refusal = await account.security.changePassword(signedIn, fields, browser.audit);
    return refusal ? refuse(reply, signedIn, 'password', refusal) : done(reply, 'password');
  });

  form('/totp', 'totp', async (signedIn, _fields, _browser, reply) => {
    const { enrolment, sealed } = await account.security.startTotp(signedIn);
    return showEnrolment(reply, signedIn, enrolment, sealed);
  });

  /** The new recovery codes, shown this once; "Continue" goes back to the page with `notice`. */
  const showCodes = (reply: FastifyReply, signedIn: SignedIn, codes: readonly string[], notice: string) =>
    renderPage(reply, page, 'recovery-codes', { codes, action: `${accountPath}/continue/${notice}`, csrfToken: account.base.csrfToken(signedIn) }, { script: true });

  form('/totp/confirm', 'totp', async (signedIn, fields, browser, reply) => {
    const sealed = fields.enrolment ?? '';
    const result = await account.security.confirmTotp(signedIn, sealed, fields.otp ?? '', browser.audit);
    if ('codes' in result) return result.codes ? showCodes(reply, signedIn, result.codes, 'totp-added') : done(reply, 'totp-added');
    const enrolment = result.invalid.includes('otp') ? await account.security.resumeTotp(signedIn, sealed) : undefined;
    if (enrolment) return showEnrolment(reply, signedIn, enrolment, sealed, result);
    throw new OAuthError('invalid_request', result.error, { redirectable: false });
  });

  form('/recovery-codes', 'recovery-codes', async (signedIn, _fields, browser, reply) => {
    const result = await account.security.newRecoveryCodes(signedIn, browser.audit);
    return 'codes' in result ? showCodes(reply, signedIn, result.codes, 'codes-generated') : refuse(reply, signedIn, 'codes', result);
  });

  // The first second factor set up here leaves the session owing it (its sign-in used none): the
  // page then signs in again, with the new factor, and shows the notice after.
  for (const notice of ['totp-added', 'codes-generated', 'passkey-added']) {
    form(`/continue/${notice}`, null, async (_signedIn, _fields, _browser, reply) => done(reply, notice), `${accountPath}?done=${notice}`);
  }

  passkeyFormRoutes({
    passkeys: account.passkeys, form, done, showCodes,
    refused: (reply, signedIn, refusal) => refuse(reply, signedIn, 'passkeys', refusal),
  });

  profileFormRoutes({ account, form, done, refuse });

  form('/totp/remove', 'totp-remove', async (signedIn, _fields, browser, reply) => {
    const refusal = await account.security.removeTotp(signedIn, browser.audit);
    return refusal ? refuse(reply, signedIn, 'totp', refusal) : done(reply, 'totp-removed');
  });

  form('/applications/remove', null, async (signedIn, fields, browser, reply) => {
    const clientId = fields.client_id;
    if (!clientId) throw new OAuthError('invalid_request', 'The client_id parameter is required.', { redirectable: false });
    const removed = { type: 'access_removed' as const, user_id: signedIn.user.id, client_id: presentedClientId(clientId) };
    await account.userSessions.removeApplicationAccess(signedIn.user.id, clientId, { recorder: recorderOf(browser.audit), eventsOf: () => [removed] });
    return done(reply, 'access-removed');
  });

  form('/sessions/end-others', null, async (signedIn, _fields, browser, reply) => {
    await account.userSessions.endOtherBrowserSessions(signedIn.user.id, signedIn.loaded.key, {
      recorder: recorderOf(browser.audit),
      eventsOf: (ended) => [{ type: 'sessions_ended', user_id: signedIn.user.id, browser_sessions: ended }],
    });
    return done(reply, 'sessions-ended');
  });

  form('/email/send', null, async (signedIn, _fields, _browser, reply) => {
    const result = await account.email.send(signedIn.user);
    if (result === 'sent') return done(reply, 'email-sent');
    if (result === 'verified-already') return done(reply, 'email-verified');
    const error = {
      'no-email': 'This account has no email address.',
      'too-many': 'Too many codes were sent in the last hour. Try again later.',
      'no-mail': 'This service cannot send mail right now.',
    }[result];
    return refuse(reply, signedIn, 'email', { error, invalid: [] });
  });

  form('/email/verify', null, async (signedIn, fields, _browser, reply) => {
    const result = await account.email.verify(signedIn.user, fields.code ?? '');
    if (result === 'verified') return done(reply, 'email-verified');
    const error = result === 'wrong' ? 'That code is not right.' : 'No code is waiting: it expired, was used, or was tried too often. Send a new one.';
    return refuse(reply, signedIn, 'email', { error, invalid: ['code'] });
  });
}
