/**
 * The returns from an upstream OpenID Connect provider (sessions/sign-in/upstream.ts): the sign-in
 * callback ({IDP_BASE_URL}/signin/oidc/callback) and the end of its sign-out
 * ({IDP_BASE_URL}/signin/oidc/signed-out).
 */
import type { FastifyInstance } from 'fastify';
import { afterUpstreamSignOut, finishUpstreamSignIn, type UpstreamCallbackDeps } from '../sessions/sign-in/upstream.ts';
import type { FlowAdapter } from './shared/flow-adapter.ts';
import { renderPage, type PageContext } from './shared/pages.ts';

export interface UpstreamRouteOptions extends UpstreamCallbackDeps {
  page: PageContext;
  adapter: FlowAdapter;
}

type StateQuery = { Querystring: Record<string, unknown> };
const stateOf = (query: Record<string, unknown>) => (typeof query.state === 'string' ? query.state : undefined);

export async function upstreamRoutes(app: FastifyInstance, options: UpstreamRouteOptions): Promise<void> {
  const { adapter } = options;
  const config = { page: true };

  app.get<StateQuery>('/signin/oidc/callback', { config }, async (request, reply) =>
    adapter.send(reply, await finishUpstreamSignIn(options, adapter.browserRequest(request), stateOf(request.query), request.url)));

  app.get<StateQuery>('/signin/oidc/signed-out', { config }, async (request, reply) => {
    const location = await afterUpstreamSignOut(options, stateOf(request.query));
    if (location) return reply.header('cache-control', 'no-store').redirect(location, 302);
    return renderPage(reply, options.page, 'signed-out', { title: 'Signed out' });
  });
}
