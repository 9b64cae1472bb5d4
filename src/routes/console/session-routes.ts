/**
 * The console's sign-in callback and its "Sign out". The callback takes the code back from the
 * authorization endpoint (sign-in.ts redeems it in this process); what it cannot accept is said
 * on a page of the console, never with data.
 */
import type { FastifyInstance } from 'fastify';
import { auditOf } from '../shared/audit.ts';
import { readCookie } from '../shared/cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { consoleCookieName, consoleSessionId, forbidden, setCookie, signInCookieName, startSignIn } from './guard.ts';
import { CSRF_PURPOSE, renderConsole } from './render.ts';
import { isValidSessionCsrfToken } from '../../sessions/csrf.ts';
import { CONSOLE_SESSION_LIMITS } from '../../console/session.ts';

export function consoleSessionRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const secure = deps.secureCookies;
  const base = `${deps.page.basePath}/admin`;

  app.get<{ Querystring: Record<string, string | undefined> }>('/callback', async (request, reply) => {
    const outcome = await deps.signIn.finish({
      query: request.query,
      cookieState: readCookie(request, signInCookieName(secure)),
      audit: auditOf(deps.audit, request),
    });
    setCookie(reply, signInCookieName(secure), '', 0, secure, 'Lax');
    switch (outcome.kind) {
      case 'signed-in':
        setCookie(reply, consoleCookieName(secure), outcome.sessionId, CONSOLE_SESSION_LIMITS.absoluteSeconds, secure, 'Strict');
        return reply.redirect(outcome.returnTo, 303);
      case 'forbidden':
        return forbidden(reply, deps, undefined);
      case 'no-mfa':
        return renderConsole(reply, deps, undefined, 'console/message', {
          title: 'A second factor is needed',
          message: 'The console needs a sign-in with a second factor. Set one up on your account page, then sign in to the console again.',
          // The account page is on the public origin, wherever the console is served.
          link: { href: `${deps.services.config.baseUrl}/account`, text: 'Go to your account' },
        }, 403);
      case 'failed':
        return renderConsole(reply, deps, undefined, 'console/message', { title: 'Sign-in failed', message: outcome.reason, link: { href: base, text: 'Sign in again' } }, 400);
    }
  });

  app.get('/sign-in', async (_request, reply) => startSignIn(reply, deps, base));

  // A form of the layout: ends the console session only (the browser session stays, as after leaving an application).
  app.post('/sign-out', async (request, reply) => {
    const id = consoleSessionId(request, deps);
    const admin = await deps.sessions.resume(id);
    const token = (request.body as Record<string, unknown> | undefined)?.csrf_token;
    if (admin && !isValidSessionCsrfToken(deps.csrfKey, admin.key, CSRF_PURPOSE, typeof token === 'string' ? token : undefined)) {
      return renderConsole(reply, deps, admin, 'console/message', { title: 'Form expired', message: 'This form was not sent from this console session. Open the page again and sign out from there.' }, 403);
    }
    await deps.sessions.end(id);
    setCookie(reply, consoleCookieName(secure), '', 0, secure, 'Strict');
    return renderConsole(reply, deps, undefined, 'console/message', { title: 'Signed out of the console', message: 'Your console session has ended.', link: { href: base, text: 'Sign in again' } });
  });
}
