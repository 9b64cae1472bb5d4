/**
 * The console's guard: every page and form goes through `consolePage` with the area it belongs
 * to and whether it reads or changes. No console session: a GET starts the sign-in (and comes
 * back), a POST goes to the overview (its form was for a session that is over). A session
 * without the role for the area: the 403 page, showing nothing. A POST: its `csrf_token` must be
 * the one of this console session (a cross-site form, or one from before a sign-in, is refused
 * with 403 and changes nothing).
 */
import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { mayChange, mayRead, type ConsoleArea } from '../../console/access.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import { isValidSessionCsrfToken } from '../../sessions/csrf.ts';
import { readCookie } from '../shared/cookies.ts';
import type { ConsoleDeps } from './deps.ts';
import { CSRF_PURPOSE, renderConsole } from './render.ts';

/** `__Host-` under https: bound to this host and path / (RFC 6265bis §4.1.3.2). */
export const consoleCookieName = (secure: boolean) => (secure ? '__Host-idp-admin' : 'idp-admin');
/** The sign-in round trip's state, until the callback. */
export const signInCookieName = (secure: boolean) => (secure ? '__Host-idp-admin-login' : 'idp-admin-login');

export function setCookie(reply: FastifyReply, name: string, value: string, maxAgeSeconds: number, secure: boolean, sameSite: 'Strict' | 'Lax'): void {
  const attributes = [`${name}=${value}`, 'Path=/', 'HttpOnly', `SameSite=${sameSite}`, `Max-Age=${maxAgeSeconds}`, ...(secure ? ['Secure'] : [])];
  reply.header('set-cookie', attributes.join('; '));
}

export const consoleSessionId = (request: FastifyRequest, deps: ConsoleDeps) => readCookie(request, consoleCookieName(deps.secureCookies));

/** A page's handler, given the signed-in administrator the guard let through. */
export type ConsoleHandler = (request: FastifyRequest, reply: FastifyReply, admin: ConsoleAdmin) => Promise<FastifyReply>;

/** Sends the browser through the sign-in pages, to come back to `returnTo`. */
export async function startSignIn(reply: FastifyReply, deps: ConsoleDeps, returnTo: string): Promise<FastifyReply> {
  const { state, location } = await deps.signIn.start(returnTo);
  setCookie(reply, signInCookieName(deps.secureCookies), state, 15 * 60, deps.secureCookies, 'Lax');
  return reply.redirect(location, 303);
}

export function forbidden(reply: FastifyReply, deps: ConsoleDeps, admin: ConsoleAdmin | undefined): FastifyReply {
  return renderConsole(reply, deps, admin, 'console/forbidden', { title: 'Not allowed' }, 403);
}

/** `handler` behind the guard of `area`: `read` for a page, `change` for a form's POST. */
export function consolePage(deps: ConsoleDeps, area: ConsoleArea, need: 'read' | 'change', handler: ConsoleHandler): RouteHandlerMethod {
  return async function guarded(request, reply) {
    const admin = await deps.sessions.resume(consoleSessionId(request, deps));
    if (!admin) {
      if (request.method === 'GET') return startSignIn(reply, deps, request.url);
      return reply.redirect(`${deps.page.basePath}/admin`, 303);
    }
    const allowed = need === 'read' ? mayRead(admin.roles, area) : mayChange(admin.roles, area);
    if (!allowed) return forbidden(reply, deps, admin);
    if (request.method === 'POST') {
      const token = (request.body as Record<string, unknown> | undefined)?.csrf_token;
      if (!isValidSessionCsrfToken(deps.csrfKey, admin.key, CSRF_PURPOSE, typeof token === 'string' ? token : undefined)) {
        return renderConsole(reply, deps, admin, 'console/message', { title: 'Form expired', message: 'This form was not sent from this console session. Open the page again and redo the change.' }, 403);
      }
    }
    return handler(request, reply, admin);
  };
}
