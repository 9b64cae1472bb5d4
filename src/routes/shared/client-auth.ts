/** Client authentication of a request (token, introspection, revocation). */
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.ts';
import { presentedClientId } from '../../events/audit-events.ts';
import { authenticateClient, type AuthenticatedClient } from '../../protocol/client-auth.ts';
import type { ClientsCache } from '../../store/clients-cache.ts';
import type { RequestAudit } from './audit.ts';
import type { Params } from './params.ts';

/** Authenticates the request's client; a failure is an audit event with its reason. */
export function authenticateRequest(request: FastifyRequest, params: Params, clients: ClientsCache, clock: Clock, audit: RequestAudit): Promise<AuthenticatedClient> {
  return authenticateClient(
    { authorization: request.headers.authorization, clientId: params.client_id, clientSecret: params.client_secret },
    {
      findClient: (id) => clients.get(id),
      now: clock(),
      failed: (reason, clientId) => audit(request, { type: 'client_authentication_failed', reason, client_id: clientId === undefined ? undefined : presentedClientId(clientId) }),
    },
  );
}
