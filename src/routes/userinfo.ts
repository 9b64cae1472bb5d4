/** GET and POST /connect/userinfo (OIDC Core §5.3): the claims protocol/userinfo.ts finds, never stored. */
import type { FastifyInstance } from 'fastify';
import { userinfo, type UserinfoDeps } from '../protocol/userinfo.ts';
import { originCheckOf } from './shared/cors.ts';

export async function userinfoRoutes(app: FastifyInstance, options: UserinfoDeps): Promise<void> {
  const config = { challenge: 'Bearer' as const };
  for (const method of ['GET', 'POST'] as const) {
    app.route({
      method,
      url: '/connect/userinfo',
      config,
      handler: async (request, reply) => {
        reply.header('cache-control', 'no-store');
        const checkClient = originCheckOf(request, reply);
        const claims = await userinfo({ authorization: request.headers.authorization, ...(checkClient ? { checkClient } : {}) }, options);
        return reply.send(claims);
      },
    });
  }
}
