/**
 * GET and POST /connect/authorize. The source address's budget first, then the client and the
 * redirect URI are trusted; from then on errors go back to the client (the error handler reads
 * `request.authorizationTarget`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { trustTarget, validateAuthorizationRequest, type HintVerification } from '../sessions/sign-in/authorization-request.ts';
import type { SignInFlow } from '../sessions/sign-in/sign-in-flow.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import type { FlowAdapter } from './shared/flow-adapter.ts';
import { singleValued } from './shared/params.ts';
import type { RateLimiter } from '../sessions/rate-limiters.ts';

export interface AuthorizeRouteOptions {
  clients: ClientsCache;
  flow: SignInFlow;
  adapter: FlowAdapter;
  hintVerification: HintVerification;
  /** IDP_AUTHORIZE_RATE_LIMIT per source address. */
  rateLimiter: RateLimiter;
}

export async function authorizeRoutes(app: FastifyInstance, options: AuthorizeRouteOptions): Promise<void> {
  const { clients, flow, adapter, hintVerification, rateLimiter } = options;

  async function authorize(request: FastifyRequest, reply: FastifyReply, input: unknown): Promise<unknown> {
    // Before anything is read or stored. Over the budget nothing is trusted yet, so the answer
    // is our own page (429), never a redirect a flood could make us send.
    await rateLimiter.consume(`authorize:${request.ip}`);
    const params = singleValued(input);
    const { client, target } = await trustTarget(params, (id) => clients.get(id));
    request.authorizationTarget = target;
    const authorizationRequest = await validateAuthorizationRequest(params, client, target, hintVerification);
    return adapter.send(reply, await flow.begin(adapter.browserRequest(request), authorizationRequest));
  }

  const config = { page: true };
  app.get('/connect/authorize', { config }, (request, reply) => authorize(request, reply, request.query));
  app.post('/connect/authorize', { config }, (request, reply) => authorize(request, reply, request.body));
}
