/**
 * GET /config on the management port: the running service's non-secret configuration facts
 * (src/config/facts.ts), which `idp doctor` judges by instead of its own environment.
 */
import type { FastifyInstance } from 'fastify';
import type { ServiceFacts } from '../config/facts.ts';

export async function serviceFactsRoutes(app: FastifyInstance, options: { facts: ServiceFacts }): Promise<void> {
  app.get('/config', async (_request, reply) => reply.header('cache-control', 'no-store').send(options.facts));
}
