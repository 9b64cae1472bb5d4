/** POST /connect/introspect (RFC 7662): confidential clients only; never cross-origin. */
import type { FastifyInstance } from 'fastify';
import { introspect, type IntrospectionDeps } from '../protocol/introspection.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import { auditOf, type RequestAudit } from './shared/audit.ts';
import { authenticateRequest } from './shared/client-auth.ts';
import { singleValued } from './shared/params.ts';

export interface IntrospectRouteOptions {
  clients: ClientsCache;
  introspection: IntrospectionDeps;
  audit: RequestAudit;
}

export async function introspectRoutes(app: FastifyInstance, options: IntrospectRouteOptions): Promise<void> {
  const { clients, introspection, audit } = options;
  app.post('/connect/introspect', { config: { challenge: 'Basic' } }, async (request, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const params = singleValued(request.body);
    const authenticated = await authenticateRequest(request, params, clients, introspection.clock, audit);
    return reply.send(await introspect(params, authenticated, introspection, auditOf(audit, request, { client_id: authenticated.client.clientId })));
  });
}
