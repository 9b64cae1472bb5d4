/** POST /connect/introspect (RFC 7662): confidential clients only; never cross-origin. */
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../errors.ts';
import type { GrantDeps } from '../grants/common.ts';
import { introspect } from '../grants/introspection.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import { auditOf, type RequestAudit } from './shared/audit.ts';
import { authenticateRequest } from './shared/client-auth.ts';
import { singleValued } from './shared/params.ts';

export interface IntrospectRouteOptions {
  clients: ClientsCache;
  grantDeps: Omit<GrantDeps, 'audit'>;
  audit: RequestAudit;
}

export async function introspectRoutes(app: FastifyInstance, options: IntrospectRouteOptions): Promise<void> {
  const { clients, grantDeps, audit } = options;
  app.post('/connect/introspect', { config: { challenge: 'Basic' } }, async (request, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const params = singleValued(request.body);
    const { client, method } = await authenticateRequest(request, params, clients, grantDeps.clock, audit);
    if (method === 'none') {
      audit(request, 'client_authentication_failed', { reason: 'public_client', client_id: client.clientId });
      throw new OAuthError('invalid_client', 'Client authentication failed.', { detail: `public client ${client.clientId} may not introspect` });
    }
    if (params.token === undefined) throw new OAuthError('invalid_request', 'The token parameter is required.');
    return reply.send(await introspect(params.token, params.token_type_hint, client, { ...grantDeps, audit: auditOf(audit, request, { client_id: client.clientId }) }));
  });
}
