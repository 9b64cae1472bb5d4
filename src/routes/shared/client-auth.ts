/**
 * Client authentication of a request (token, introspection, revocation), and the per-client
 * CORS rule: a browser call is served only from an origin registered on the authenticated client.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../clock.ts';
import { OAuthError } from '../../errors.ts';
import { authenticateClient, type AuthenticatedClient } from '../../protocol/client-auth.ts';
import type { ClientsCache } from '../../store/clients-cache.ts';
import type { ClientRecord } from '../../store/types.ts';
import type { RequestAudit } from './audit.ts';
import type { Params } from './params.ts';

/** A presented client id as audited: whatever was sent, cut to a length a log line can carry. */
const MAX_AUDITED_CLIENT_ID = 200;

/** Authenticates the request's client; a failure is an audit event with its reason. */
export function authenticateRequest(request: FastifyRequest, params: Params, clients: ClientsCache, clock: Clock, audit: RequestAudit): Promise<AuthenticatedClient> {
  return authenticateClient(
    { authorization: request.headers.authorization, clientId: params.client_id, clientSecret: params.client_secret },
    {
      findClient: (id) => clients.get(id),
      now: clock(),
      failed: (reason, clientId) => audit(request, { type: 'client_authentication_failed', reason, client_id: clientId?.slice(0, MAX_AUDITED_CLIENT_ID) }),
    },
  );
}

/**
 * interface.md: cross-origin browser calls only from an origin registered on the client. The
 * CORS layer let the origin through because some client registered it; for this client the
 * answer must not be readable from it either.
 */
export function assertOriginAllowed(request: FastifyRequest, reply: FastifyReply, client: ClientRecord): void {
  const origin = request.headers.origin;
  if (origin !== undefined && !client.corsOrigins.includes(origin)) {
    reply.removeHeader('access-control-allow-origin');
    reply.removeHeader('access-control-allow-credentials');
    throw new OAuthError('invalid_request', 'This client may not be used from this origin.', { detail: `origin ${origin} not registered on ${client.clientId}` });
  }
}
