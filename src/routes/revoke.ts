/** POST /connect/revoke (RFC 7009): 200 whether or not the token was known. */
import type { FastifyInstance } from 'fastify';
import { revoke, type RevocationDeps } from '../protocol/revocation.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import { auditOf, type RequestAudit } from './shared/audit.ts';
import { authenticateRequest } from './shared/client-auth.ts';
import { assertOriginAllowed } from './shared/cors.ts';
import { singleValued } from './shared/params.ts';

export interface RevokeRouteOptions {
  clients: ClientsCache;
  revocation: RevocationDeps;
  audit: RequestAudit;
}

export async function revokeRoutes(app: FastifyInstance, options: RevokeRouteOptions): Promise<void> {
  const { clients, revocation, audit } = options;
  app.post('/connect/revoke', { config: { challenge: 'Basic' } }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const params = singleValued(request.body);
    const { client } = await authenticateRequest(request, params, clients, revocation.clock, audit);
    assertOriginAllowed(request, reply, client);
    await revoke(params, client, revocation, auditOf(audit, request, { client_id: client.clientId }));
    return reply.code(200).send();
  });
}
