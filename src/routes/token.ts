/**
 * POST /connect/token: a short ordered pipeline. No-store headers, the source address's budget,
 * parse (a repeated parameter is invalid_request), authenticate the client, its budget and its
 * origin; then the grants find the grant (unsupported_grant_type), check the client may use it
 * (unauthorized_client), parse the grant's own parameters and handle them. Every request spends
 * its address's budget; only a request answered with tokens keeps its share of its client's.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Grants } from '../grants/index.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import { auditOf, type RequestAudit } from './shared/audit.ts';
import { authenticateRequest } from './shared/client-auth.ts';
import { assertOriginAllowed } from './shared/cors.ts';
import { singleValued } from './shared/params.ts';
import type { RateLimiter } from '../sessions/rate-limiters.ts';

export interface TokenRouteOptions {
  clients: ClientsCache;
  clock: Clock;
  grants: Grants;
  audit: RequestAudit;
  rateLimiter: RateLimiter;
}

export async function tokenRoutes(app: FastifyInstance, options: TokenRouteOptions): Promise<void> {
  const { clients, clock, grants, audit, rateLimiter } = options;
  app.post('/connect/token', { config: { challenge: 'Basic' } }, async (request, reply) => {
    // RFC 6749 §5.1: responses with tokens must not be stored.
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    await rateLimiter.consume(`addr:${request.ip}`);
    const params = singleValued(request.body);
    const authenticated = await authenticateRequest(request, params, clients, clock, audit);
    const giveBack = await rateLimiter.consume(`client:${authenticated.client.clientId}`);
    try {
      assertOriginAllowed(request, reply, authenticated.client);
      return reply.send(await grants.issue(params, authenticated, auditOf(audit, request, { client_id: authenticated.client.clientId })));
    } catch (error) {
      // A public client is authenticated by its name alone: if requests that fail kept their
      // share, anyone could spend the client's budget and lock its users out. The address's
      // budget, spent above, bounds them.
      giveBack();
      throw error;
    }
  });
}
