/**
 * GET and POST /connect/authorize. The client and the redirect URI are trusted first; from then
 * on errors go back to the client (the error handler reads `request.authorizationTarget`).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { trustTarget, validateAuthorizationRequest, type RequestDeps } from '../sessions/authorization-request.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import { singleValued } from './shared/params.ts';
import type { SignInFlow } from './shared/sign-in-flow.ts';

export interface AuthorizeRouteOptions {
  clients: ClientsCache;
  flow: SignInFlow;
  requestDeps: RequestDeps;
}

export async function authorizeRoutes(app: FastifyInstance, options: AuthorizeRouteOptions): Promise<void> {
  const { clients, flow, requestDeps } = options;

  async function authorize(request: FastifyRequest, reply: FastifyReply, input: unknown): Promise<unknown> {
    const params = singleValued(input);
    const { client, target } = await trustTarget(params, (id) => clients.get(id));
    request.authorizationTarget = target;
    const authorizationRequest = await validateAuthorizationRequest(params, client, target, requestDeps);
    return flow.begin(request, reply, authorizationRequest);
  }

  const config = { page: true };
  app.get('/connect/authorize', { config }, (request, reply) => authorize(request, reply, request.query));
  app.post('/connect/authorize', { config }, (request, reply) => authorize(request, reply, request.body));
}
