/** POST /connect/revoke (RFC 7009): 200 whether or not the token was known. */
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../errors.ts';
import type { GrantDeps } from '../grants/common.ts';
import { revoke } from '../grants/revocation.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import { auditOf, type RequestAudit } from './shared/audit.ts';
import { assertOriginAllowed, authenticateRequest } from './shared/client-auth.ts';
import { singleValued } from './shared/params.ts';

export interface RevokeRouteOptions {
  clients: ClientsCache;
  grantDeps: Omit<GrantDeps, 'audit'>;
  audit: RequestAudit;
}

export async function revokeRoutes(app: FastifyInstance, options: RevokeRouteOptions): Promise<void> {
  const { clients, grantDeps, audit } = options;
  app.post('/connect/revoke', { config: { challenge: 'Basic' } }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const params = singleValued(request.body);
    const { client } = await authenticateRequest(request, params, clients, grantDeps.clock, audit);
    assertOriginAllowed(request, reply, client);
    if (params.token === undefined) throw new OAuthError('invalid_request', 'The token parameter is required.');
    await revoke(params.token, params.token_type_hint, client, { ...grantDeps, audit: auditOf(audit, request, { client_id: client.clientId }) });
    return reply.code(200).send();
  });
}
