/**
 * POST /connect/token: a short ordered pipeline. No-store headers, the source address's budget,
 * parse (a repeated parameter is invalid_request), authenticate the client, its budget and its
 * origin, find the grant (unsupported_grant_type), check the client may use it
 * (unauthorized_client), parse the grant's own parameters, handle.
 */
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../errors.ts';
import type { GrantDeps } from '../grants/common.ts';
import { grants } from '../grants/index.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import { auditOf, type RequestAudit } from './shared/audit.ts';
import { assertOriginAllowed, authenticateRequest } from './shared/client-auth.ts';
import { parseParams, singleValued } from './shared/params.ts';
import type { RateLimiter } from '../sessions/rate-limit.ts';

export interface TokenRouteOptions {
  clients: ClientsCache;
  /** Everything the grants need but the audit, which each request binds to itself. */
  grantDeps: Omit<GrantDeps, 'audit'>;
  audit: RequestAudit;
  rateLimiter: RateLimiter;
}

export async function tokenRoutes(app: FastifyInstance, options: TokenRouteOptions): Promise<void> {
  const { clients, grantDeps, audit, rateLimiter } = options;
  app.post('/connect/token', { config: { challenge: 'Basic' } }, async (request, reply) => {
    // RFC 6749 §5.1: responses with tokens must not be stored.
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    await rateLimiter.consume(`addr:${request.ip}`);
    const params = singleValued(request.body);
    const authenticated = await authenticateRequest(request, params, clients, grantDeps.clock, audit);
    await rateLimiter.consume(`client:${authenticated.client.clientId}`);
    assertOriginAllowed(request, reply, authenticated.client);
    if (params.grant_type === undefined) throw new OAuthError('invalid_request', 'The grant_type parameter is required.');
    const grant = grants.get(params.grant_type);
    if (!grant) throw new OAuthError('unsupported_grant_type', 'The grant type is not supported.');
    if (!authenticated.client.grantTypes.includes(grant.grantType)) {
      throw new OAuthError('unauthorized_client', 'The client may not use this grant type.');
    }
    const deps = { ...grantDeps, audit: auditOf(audit, request, { client_id: authenticated.client.clientId }) };
    return reply.send(await grant.handle(parseParams(grant.paramsSchema, params), authenticated, deps));
  });
}
