/**
 * IDP_MANAGEMENT_PORT: /metrics, /healthz, /readyz and /config (what `idp doctor` asks) on a port
 * of their own (loopback by default), for Prometheus, probes and operators inside the network. It listens when the public app gets
 * ready (a port in use fails the start) and closes with it.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { OAuthError } from '../errors.ts';
import type { Services } from '../composition/services.ts';
import { sendOAuthError } from './error-handler.ts';
import { createLogSink } from '../events/record.ts';
import type { AdminApiServices } from './admin/deps.ts';
import { registerAdminApi } from './admin/index.ts';
import { healthRoutes } from './health.ts';
import { createRequestAudit } from './shared/audit.ts';
import { metricsRoutes } from './metrics.ts';
import { serviceFactsRoutes } from './service-facts.ts';
import { serviceFacts } from '../config/facts.ts';
import { SERVICE_VERSION } from '../version.ts';
import { createManagementHostCheck } from './shared/host.ts';

const FOREIGN_HOST = 'The management port answers only for an IP address, a name without a dot (such as localhost or a container name), '
  + 'IDP_MANAGEMENT_HOST, or a name listed in IDP_MANAGEMENT_HOSTS.';

/** What the management port uses of the services: the probes' stores and source, and the Administration API's. */
type ManagementServices = Pick<Services, 'durable' | 'ephemeral' | 'source' | 'config'> & AdminApiServices;

export function serveManagementPort(app: FastifyInstance, management: NonNullable<Config['management']>, services: ManagementServices, metrics: Metrics, logger: Logger): void {
  const server = Fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }) });
  refuseForeignHosts(server, management);
  void server.register(healthRoutes, { durable: services.durable, ephemeral: services.ephemeral, source: services.source });
  void server.register(metricsRoutes, { metrics });
  void server.register(serviceFactsRoutes, { facts: serviceFacts(services.config, SERVICE_VERSION) });
  if (services.config.adminApi === 'management') {
    const audit = createRequestAudit(createLogSink(metrics));
    void registerAdminApi(server, services, audit, { prefix: '', origin: `http://${management.host.includes(':') ? `[${management.host}]` : management.host}:${management.port}` });
  }
  app.addHook('onReady', async () => {
    await server.listen({ port: management.port, host: management.host });
  });
  app.addHook('onClose', async () => {
    await server.close();
  });
}

/** A page of another site that rebinds its name to this port must not read it (see createManagementHostCheck). */
function refuseForeignHosts(server: FastifyInstance, management: NonNullable<Config['management']>): void {
  const isManagementHost = createManagementHostCheck(management);
  server.addHook('onRequest', (request, reply, done) => {
    if (isManagementHost(request.host)) {
      done();
      return;
    }
    request.log.info({ host: request.host }, 'management port: request for another host refused');
    void sendOAuthError(reply, new OAuthError('invalid_request', FOREIGN_HOST, { redirectable: false }));
  });
}
