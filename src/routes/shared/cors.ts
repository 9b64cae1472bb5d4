/**
 * Per-client CORS, whole: which endpoints answer browsers of another origin (token, userinfo,
 * revocation; never introspection), and that a cross-origin call is served only from an origin
 * registered on the client the request turns out to be about.
 */
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError } from '../../errors.ts';
import type { ClientsCache } from '../../store/clients-cache.ts';
import type { ClientRecord } from '../../store/records.ts';

/** The endpoints a browser of another origin may call (RFC 7662 §4: introspection is not one). */
const CORS_PATHS = ['/connect/token', '/connect/userinfo', '/connect/revoke'];

/**
 * The CORS layer of the scope the three endpoints are registered in. An origin that some client
 * registered passes here; the endpoint then checks it against its own client (assertOriginAllowed).
 */
export async function registerClientCors(scope: FastifyInstance, options: { clients: Pick<ClientsCache, 'allowedOrigins'>; basePath: string }): Promise<void> {
  const { clients, basePath } = options;
  // The plugin's OPTIONS route is global: the path decides, so introspection never says yes.
  const corsPaths = new Set(CORS_PATHS.map((p) => `${basePath}${p}`));
  const corsOptions = (origin: string | false) => ({ origin, methods: ['GET', 'POST'], allowedHeaders: ['authorization', 'content-type'], maxAge: 600 });
  const notAllowed = corsOptions(false);
  await scope.register(cors, {
    // A callback, answered at once for the requests of servers (no Origin): no promise per request.
    delegator: (request: FastifyRequest, callback: (error: Error | null, options?: ReturnType<typeof corsOptions>) => void) => {
      const origin = request.headers.origin;
      if (origin === undefined || !corsPaths.has(request.url.split('?')[0] ?? '')) {
        callback(null, notAllowed);
        return;
      }
      clients.allowedOrigins().then((origins) => callback(null, origins.has(origin) ? corsOptions(origin) : notAllowed), callback);
    },
  });
}

/**
 * The README's "Endpoints" (cross-origin calls): a browser call only from an origin registered on
 * the client. The CORS layer let the origin through because some client registered it; for this
 * client the answer must not be readable from it either.
 */
export function assertOriginAllowed(request: FastifyRequest, reply: FastifyReply, client: ClientRecord): void {
  const origin = request.headers.origin;
  if (origin !== undefined && !client.corsOrigins.includes(origin)) {
    reply.removeHeader('access-control-allow-origin');
    reply.removeHeader('access-control-allow-credentials');
    throw new OAuthError('invalid_request', 'This client may not be used from this origin.', { detail: `origin ${origin} not registered on ${client.clientId}` });
  }
}

/**
 * For an endpoint that learns its client late (userinfo: the token's client): the check to run
 * on that client for a cross-origin call, or undefined for a call without Origin.
 */
export function originCheckOf(request: FastifyRequest, reply: FastifyReply): ((client: ClientRecord) => void) | undefined {
  return request.headers.origin !== undefined ? (client) => assertOriginAllowed(request, reply, client) : undefined;
}
