/**
 * IDP_MANAGEMENT_PORT: /metrics, /healthz, /readyz and /config (what `idp doctor` asks), and with
 * IDP_ADMIN_API=management the Administration API and the console, on a port of their own (loopback by default), for Prometheus, probes and operators inside the network. It listens when the public app gets
 * ready (a port in use fails the start) and closes with it.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { managementOrigin, type Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { OAuthError } from '../errors.ts';
import type { Services } from '../composition/services.ts';
import { sendOAuthError } from './error-handler.ts';
import { createLogSink } from '../events/record.ts';
import formbody from '@fastify/formbody';
import view from '@fastify/view';
import { Eta } from 'eta';
import { assetRoutes } from './assets.ts';
import { registerConsole } from './console/index.ts';
import { createConsoleDeps } from './console/deps.ts';
import { registerAdminApi } from './admin/index.ts';
import { healthRoutes } from './health.ts';
import { createRequestAudit, type RequestAudit } from './shared/audit.ts';
import { metricsRoutes } from './metrics.ts';
import { serviceFactsRoutes } from './service-facts.ts';
import { serviceFacts } from '../config/facts.ts';
import { SERVICE_VERSION } from '../version.ts';
import { createManagementHostCheck } from './shared/host.ts';

const FOREIGN_HOST = 'The management port answers only for an IP address, a name without a dot (such as localhost or a container name), '
  + 'IDP_MANAGEMENT_HOST, or a name listed in IDP_MANAGEMENT_HOSTS.';

/** Where the console's templates and assets are. */
export interface ManagementPages {
  templatesDir: string;
}

export function serveManagementPort(app: FastifyInstance, management: NonNullable<Config['management']>, services: Services, metrics: Metrics, logger: Logger, pages: ManagementPages): void {
  const server = Fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }) });
  refuseForeignHosts(server, management);
  void server.register(healthRoutes, { durable: services.durable, ephemeral: services.ephemeral, source: services.source });
  void server.register(metricsRoutes, { metrics });
  void server.register(serviceFactsRoutes, { facts: serviceFacts(services.config, SERVICE_VERSION) });
  if (services.config.adminApi === 'management') {
    const audit = createRequestAudit(createLogSink(metrics));
    void registerAdminApi(server, services, audit, { prefix: '', origin: managementOrigin(management) });
    if (services.config.adminConsole) void server.register((scope) => registerManagementConsole(scope, services, audit, pages));
  }
  app.addHook('onReady', async () => {
    await server.listen({ port: management.port, host: management.host });
  });
  app.addHook('onClose', async () => {
    await server.close();
  });
}

/**
 * The console at `/admin` of the management origin, in a scope of its own (its form parser and
 * views are not the API's). It signs in through the public sign-in pages; the built-in client's
 * callback is then this origin's (config.ts consoleBaseUrl).
 */
async function registerManagementConsole(scope: FastifyInstance, services: Services, audit: RequestAudit, pages: ManagementPages): Promise<void> {
  await scope.register(formbody);
  scope.decorateReply('locals', null);
  await scope.register(view, {
    engine: { eta: new Eta({ views: pages.templatesDir, autoEscape: true, cache: true }) },
    root: pages.templatesDir,
    production: true,
  });
  await scope.register(assetRoutes, { templatesDir: pages.templatesDir, brand: services.config.brand });
  const page = { basePath: '', brand: { name: services.config.brand.name, hasLogo: services.config.brand.logo !== undefined } };
  await registerConsole(scope, { deps: createConsoleDeps(services, audit, page), templatesDir: pages.templatesDir });
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
