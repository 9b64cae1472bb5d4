/** POST /connect/revoke (RFC 7009): 200 whether or not the token was known. */
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../errors.ts';
import type { GrantDeps } from '../grants/common.ts';
import { revoke } from '../grants/revocation.ts';
import type { ClientsCache } from '../store/clients-cache.ts';
import { assertOriginAllowed, authenticateRequest } from './shared/client-auth.ts';
import { singleValued } from './shared/params.ts';

export async function revokeRoutes(app: FastifyInstance, options: { clients: ClientsCache; grantDeps: GrantDeps }): Promise<void> {
  const { clients, grantDeps } = options;
  app.post('/connect/revoke', { config: { challenge: 'Basic' } }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const params = singleValued(request.body);
    const { client } = await authenticateRequest(request, params, clients, grantDeps.clock);
    assertOriginAllowed(request, reply, client);
    if (params.token === undefined) throw new OAuthError('invalid_request', 'The token parameter is required.');
    await revoke(params.token, params.token_type_hint, client, grantDeps);
    return reply.code(200).send();
  });
}
