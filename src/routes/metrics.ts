/** GET /metrics: Prometheus text (README, Production). */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics.ts';

export async function metricsRoutes(app: FastifyInstance, options: { metrics: Metrics }): Promise<void> {
  app.get('/metrics', async (_request, reply) =>
    reply.header('content-type', options.metrics.contentType).header('cache-control', 'no-store').send(await options.metrics.render()),
  );
}
