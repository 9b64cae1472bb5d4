/** GET /.well-known/jwks: the public members of every published signing key. */
import type { FastifyInstance } from 'fastify';
import { JWKS_MAX_AGE_SECONDS, type KeyManager } from '../tokens/keys.ts';

export async function jwksRoutes(app: FastifyInstance, options: { keys: KeyManager }): Promise<void> {
  app.get('/.well-known/jwks', async (_request, reply) => {
    const jwks = await options.keys.jwks();
    // Short enough that a rotation is seen soon; relying parties refetch on an unknown kid anyway.
    return reply
      .header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}, stale-while-revalidate=60`)
      .header('access-control-allow-origin', '*')
      .send(jwks);
  });
}
