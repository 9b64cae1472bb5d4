/**
 * IDP_MANAGEMENT_PORT: /metrics, /healthz and /readyz on a port of their own (loopback by
 * default), for Prometheus and probes inside the network. It listens when the public app gets
 * ready (a port in use fails the start) and closes with it.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import type { Services } from '../services.ts';
import { healthRoutes } from './health.ts';
import { metricsRoutes } from './metrics.ts';

export function serveManagementPort(app: FastifyInstance, management: NonNullable<Config['management']>, services: Services, metrics: Metrics, logger: Logger): void {
  const server = Fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }) });
  void server.register(healthRoutes, { durable: services.durable, ephemeral: services.ephemeral, source: services.source });
  void server.register(metricsRoutes, { metrics });
  app.addHook('onReady', async () => {
    await server.listen({ port: management.port, host: management.host });
  });
  app.addHook('onClose', async () => {
    await server.close();
  });
}
