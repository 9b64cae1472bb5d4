/**
 * The account page, /account: GET shows it to the signed-in user (a browser without a complete
 * sign-in goes through the sign-in pages first and comes back); each section's form posts to
 * its own path (routes/account-forms.ts). /account/sign-in-again asks for the password (and
 * second factor) again, as a security change needs a recent sign-in.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SignedIn } from '../sessions/account/signed-in.ts';
import { accountView } from '../sessions/account/view.ts';
import { EMAIL_CODE } from '../sessions/account/email-verification.ts';
import { passwordRules } from '../sources/password-policy.ts';
import { connectionsOf } from './account-connections.ts';
import { accountFormRoutes, type AccountRouteOptions } from './account-forms.ts';
import { CONFIRMED_ACTIONS, confirmingOf, doneOf, isConfirmedAction, messageOf, type AccountMessage, type Confirming } from './account-messages.ts';
import { renderPage } from './shared/pages.ts';

export type { AccountRouteOptions };

export async function accountRoutes(app: FastifyInstance, options: AccountRouteOptions): Promise<void> {
  const { account, flow, adapter, page, rateLimiter } = options;
  const accountPath = `${page.basePath}/account`;
  const config = { page: true };

  /** The page for the signed-in user, with a prefilled code or an action's message (next to the action). */
  async function show(reply: FastifyReply, signedIn: SignedIn, extra: { emailCode?: string; message?: AccountMessage; confirming?: Confirming } = {}): Promise<FastifyReply> {
    const view = accountView(signedIn, account.base.isRecent(signedIn), account.base.now());
    const { message } = extra;
    // "Add a passkey" needs the page's own script: only then does the page allow it (script-src 'self').
    const options = view.factorsHere ? await account.passkeys.addOptions(signedIn) : undefined;
    return renderPage(reply, page, 'account', {
      ...view,
      ...(await connectionsOf(account.userSessions, signedIn, account.base.now())),
      accountPath,
      csrfToken: account.base.csrfToken(signedIn),
      passkey: options && { mode: 'create', action: `${accountPath}/passkeys`, options, named: true },
      rules: passwordRules(),
      emailCode: extra.emailCode,
      message,
      confirming: extra.confirming,
      // Fields in error, as `section.field`: each form's own fields.
      invalid: message ? message.invalid.map((field) => `${message.section}.${field}`) : [],
    }, { status: message?.kind === 'error' ? 400 : 200, script: options !== undefined });
  }

  type AccountQuery = { Querystring: Record<string, unknown> };
  app.get<AccountQuery>('/account', { config }, async (request, reply) => {
    const browser = adapter.browserRequest(request);
    const emailCode = typeof request.query.email_code === 'string' && EMAIL_CODE.test(request.query.email_code) ? request.query.email_code : undefined;
    const doneKey = doneOf(request.query);
    const signedIn = await account.base.signedIn(browser.sessionId);
    // The mailed link's code is kept through the sign-in: it comes back to this page filled in. So
    // is a notice: the first second factor set up here is asked for at once, by a new sign-in.
    if (!signedIn) {
      await rateLimiter.consume(`authorize:${request.ip}`);
      const query = new URLSearchParams({ ...(doneKey ? { done: doneKey } : {}), ...(emailCode ? { email_code: emailCode } : {}) }).toString();
      return adapter.send(reply, await flow.beginAccount(browser, query ? `${accountPath}?${query}` : accountPath));
    }
    const message = messageOf(request.query);
    const confirming = confirmingOf(request.query);
    return show(reply, signedIn, { ...(message ? { message } : {}), ...(emailCode ? { emailCode } : {}), ...(confirming ? { confirming } : {}) });
  });

  /**
   * Confirms it is the signed-in user (`for`: the change that asked), the account fixed, then
   * back to that change's section. The change itself is not replayed: its form is posted again
   * from the page (a replayed POST would carry a stale CSRF token, and do what was not seen).
   */
  app.get<AccountQuery>('/account/sign-in-again', { config }, async (request, reply) => {
    await rateLimiter.consume(`authorize:${request.ip}`);
    const browser = adapter.browserRequest(request);
    const signedIn = await account.base.signedIn(browser.sessionId);
    if (!signedIn) return adapter.send(reply, await flow.beginAccount(browser, accountPath));
    const action = isConfirmedAction(request.query.for) ? request.query.for : undefined;
    const returnTo = action ? `${accountPath}?${new URLSearchParams({ confirmed: action })}` : accountPath;
    return adapter.send(reply, await flow.beginAccount(browser, returnTo, { username: signedIn.user.username, purpose: action ? CONFIRMED_ACTIONS[action].purpose : 'account' }));
  });

  await accountFormRoutes(app, { ...options, accountPath, show });
}
