/**
 * GET and POST /connect/logout (OpenID Connect RP-Initiated Logout 1.0): sessions/end-session.ts
 * decides; this shows the confirmation or the signed-out page, or redirects. Errors are always
 * our own page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endSession, type EndSessionDeps } from '../sessions/end-session.ts';
import type { ClientRecord } from '../store/records.ts';
import { auditOf, type RequestAudit } from './shared/audit.ts';
import { withQuery } from './shared/authorization-response.ts';
import { clearSessionCookie, readSessionCookie } from './shared/cookies.ts';
import { formActionSource, renderPage, type PageContext } from './shared/pages.ts';
import { singleValued } from './shared/params.ts';

export interface LogoutRouteOptions {
  page: PageContext;
  secureCookies: boolean;
  audit: RequestAudit;
  endSession: EndSessionDeps;
}

/**
 * A link back to the client, when one is known: the origin of its first web redirect URI (or
 * post-logout URI). Both are registered by an administrator, so the link goes nowhere else.
 */
function backToApplication(client: ClientRecord | undefined): { applicationUrl?: string; clientName?: string } {
  if (!client) return {};
  const origin = [...client.redirectUris, ...client.postLogoutRedirectUris].map(formActionSource).find((source) => /^https?:\/\//.test(source));
  return origin ? { applicationUrl: `${origin}/`, clientName: client.displayName || client.clientId } : {};
}

export async function logoutRoutes(app: FastifyInstance, options: LogoutRouteOptions): Promise<void> {
  const { page, secureCookies } = options;

  async function logout(request: FastifyRequest, reply: FastifyReply, input: unknown): Promise<unknown> {
    const outcome = await endSession({
      params: singleValued(input),
      sessionId: readSessionCookie(request, secureCookies),
      signedOut: () => clearSessionCookie(reply, secureCookies),
      audit: auditOf(options.audit, request),
    }, options.endSession);
    switch (outcome.kind) {
      case 'confirm':
        return renderPage(reply, page, 'logout-confirm', {
          action: `${page.basePath}/connect/logout`,
          accountName: outcome.accountName,
          csrfToken: outcome.csrfToken,
          fields: outcome.fields,
          clientName: outcome.client ? outcome.client.displayName || outcome.client.clientId : undefined,
        });
      case 'signed-out':
        return renderPage(reply, page, 'signed-out', { ...(outcome.stillSignedIn ? { stillSignedIn: true } : {}), ...backToApplication(outcome.client) });
      case 'redirect':
        return reply.header('cache-control', 'no-store').redirect(withQuery(outcome.location, outcome.query), 302);
    }
  }

  const config = { page: true };
  app.get('/connect/logout', { config }, (request, reply) => logout(request, reply, request.query));
  app.post('/connect/logout', { config }, (request, reply) => logout(request, reply, request.body));
}
