/**
 * The account page, /account: GET shows it to the signed-in user (a browser without a complete
 * sign-in goes through the sign-in pages first and comes back); each section's form posts to
 * its own path (routes/account-forms.ts). /account/sign-in-again asks for the password (and
 * second factor) again, as a security change needs a recent sign-in.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SignedIn } from '../sessions/account.ts';
import { accountView } from '../sessions/account-view.ts';
import { EMAIL_CODE } from '../sessions/email-verification.ts';
import { passwordRules } from '../sources/password-policy.ts';
import { connectionsOf } from './account-connections.ts';
import { PASSKEY_NOTICES } from './account-passkey-forms.ts';
import { accountFormRoutes, type AccountRouteOptions, type SectionProblem } from './account-forms.ts';
import { renderPage } from './shared/pages.ts';

/** The notices a change ends on (`?done=`): fixed texts, so the query never reaches the page as such. */
const NOTICES: Record<string, string> = {
  password: 'Your password was changed. Your applications and other browsers were signed out.',
  'totp-added': 'The authenticator app is set up. Sign-ins now ask for its code.',
  'codes-generated': 'Your new recovery codes are in force; the old ones no longer work.',
  'totp-removed': 'The authenticator app was removed.',
  'email-sent': 'We sent a code to your email address. Enter it below.',
  'email-verified': 'Your email address is verified.',
  'access-removed': 'The application no longer has access to your account. If you use it again, it asks for your permission again.',
  'sessions-ended': 'Your other browser sessions were signed out.',
  ...PASSKEY_NOTICES,
};

export type { AccountRouteOptions };

export async function accountRoutes(app: FastifyInstance, options: AccountRouteOptions): Promise<void> {
  const { account, flow, adapter, page, rateLimiter } = options;
  const accountPath = `${page.basePath}/account`;
  const config = { page: true };

  /** The page for the signed-in user, with a notice, a prefilled code or a section's refusal. */
  async function show(reply: FastifyReply, signedIn: SignedIn, extra: { notice?: string; emailCode?: string; problem?: SectionProblem } = {}): Promise<FastifyReply> {
    const view = accountView(signedIn, account.base.isRecent(signedIn));
    const { problem } = extra;
    // "Add a passkey" needs the page's own script: only then does the page allow it (script-src 'self').
    const options = view.factorsHere ? await account.passkeys.addOptions(signedIn) : undefined;
    return renderPage(reply, page, 'account', {
      ...view,
      ...(await connectionsOf(account.userSessions, signedIn)),
      accountPath,
      csrfToken: account.base.csrfToken(signedIn),
      passkey: options && { mode: 'create', action: `${accountPath}/passkeys`, options, named: true },
      rules: passwordRules(),
      notice: extra.notice,
      emailCode: extra.emailCode,
      errors: problem ? { [problem.section]: problem.error } : {},
      // Fields in error, as `section.field`: each form's own fields.
      invalid: problem ? problem.invalid.map((field) => `${problem.section}.${field}`) : [],
    }, { status: problem ? 400 : 200, script: options !== undefined });
  }

  type AccountQuery = { Querystring: Record<string, unknown> };
  app.get<AccountQuery>('/account', { config }, async (request, reply) => {
    const browser = adapter.browserRequest(request);
    const emailCode = typeof request.query.email_code === 'string' && EMAIL_CODE.test(request.query.email_code) ? request.query.email_code : undefined;
    const doneKey = typeof request.query.done === 'string' && Object.hasOwn(NOTICES, request.query.done) ? request.query.done : undefined;
    const signedIn = await account.base.signedIn(browser.sessionId);
    // The mailed link's code is kept through the sign-in: it comes back to this page filled in. So
    // is a notice: the first second factor set up here is asked for at once, by a new sign-in.
    if (!signedIn) {
      await rateLimiter.consume(`authorize:${request.ip}`);
      const query = new URLSearchParams({ ...(doneKey ? { done: doneKey } : {}), ...(emailCode ? { email_code: emailCode } : {}) }).toString();
      return adapter.send(reply, await flow.beginAccount(browser, query ? `${accountPath}?${query}` : accountPath, false));
    }
    const done = doneKey && NOTICES[doneKey];
    return show(reply, signedIn, { ...(done ? { notice: done } : {}), ...(emailCode ? { emailCode } : {}) });
  });

  app.get('/account/sign-in-again', { config }, async (request: FastifyRequest, reply) => {
    await rateLimiter.consume(`authorize:${request.ip}`);
    return adapter.send(reply, await flow.beginAccount(adapter.browserRequest(request), accountPath, true));
  });

  await accountFormRoutes(app, { ...options, accountPath, show });
}
