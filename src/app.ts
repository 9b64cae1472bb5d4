/**
 * buildApp(config, services): the Fastify application with every route plugin. It listens on
 * nothing by itself, so tests can use it in process and main.ts can start it.
 */
import { join } from 'node:path';
import formbody from '@fastify/formbody';
import view from '@fastify/view';
import { Eta } from 'eta';
import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { combineSinks, createLogSink } from './events/record.ts';
import { createRequestAudit, type RequestAudit } from './routes/shared/audit.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { accountRoutes } from './routes/account.ts';
import { assetRoutes } from './routes/assets.ts';
import { authorizeRoutes } from './routes/authorize.ts';
import { discoveryRoutes } from './routes/discovery.ts';
import { registerAdminApi } from './routes/admin/index.ts';
import { registerConsole } from './routes/console/index.ts';
import { createConsoleDeps } from './routes/console/deps.ts';
import { registerErrorHandler } from './routes/error-handler.ts';
import { healthRoutes } from './routes/health.ts';
import { interactionRoutes } from './routes/interaction.ts';
import { introspectRoutes } from './routes/introspect.ts';
import { logoutRoutes } from './routes/logout.ts';
import { serveManagementPort } from './routes/management.ts';
import { addRequestLog, prepareEveryRequest } from './routes/request-hooks.ts';
import { recoverRoutes } from './routes/recover.ts';
import { revokeRoutes } from './routes/revoke.ts';
import { serverOptions } from './routes/server-options.ts';
import { registerClientCors } from './routes/shared/cors.ts';
import { foreignHostCheck } from './routes/shared/host.ts';
import type { PageContext } from './routes/shared/pages.ts';
import { securityHeaders } from './routes/shared/security-headers.ts';
import { jwksRoutes } from './routes/jwks.ts';
import { tokenRoutes } from './routes/token.ts';
import { upstreamRoutes } from './routes/upstream.ts';
import { userinfoRoutes } from './routes/userinfo.ts';
import { createFlowAdapter } from './routes/shared/flow-adapter.ts';
import type { Services } from './composition/services.ts';
import { basePathOf } from './composition/protocol.ts';

const TEMPLATES_DIR = join(import.meta.dirname, '..', 'templates');

export async function buildApp(config: Config, services: Services, logger: Logger): Promise<FastifyInstance> {
  const headers = securityHeaders(config);
  const app = Fastify(serverOptions(config, logger, headers));
  const basePath = basePathOf(config.baseUrl);
  const page = pageContext(config, basePath);
  const metrics = createMetrics({
    durable: services.durable, ephemeral: services.ephemeral, mail: services.mailer,
    webhooks: { results: services.deliveryResults, backlog: () => services.durable.webhooks.backlog() },
  });
  if (config.otlpEndpoint) await traceRequests(app);
  registerErrorHandler(app, { issuer: config.issuer, page });
  prepareEveryRequest(app, { metrics, headers, refuseForeignHost: foreignHostCheck(config, basePath) });
  addRequestLog(app, metrics, basePath);
  // Every POST body of the interface is a form: no JSON parser, so other media types are refused.
  app.removeAllContentTypeParsers();
  await app.register(formbody);
  // Declared here, so that @fastify/view adds no hook giving every reply, API calls included, an
  // empty `locals` object: no page reads it.
  app.decorateReply('locals', null);
  await app.register(view, {
    engine: { eta: new Eta({ views: TEMPLATES_DIR, autoEscape: true, cache: true }) },
    root: TEMPLATES_DIR,
    production: true,
  });
  // Every route lives under the path of the base URL, so a proxy need not rewrite paths.
  await app.register((scope) => registerRoutes(scope, config, services, basePath, metrics), { prefix: basePath });
  if (config.management) serveManagementPort(app, config.management, services, metrics, logger, { templatesDir: TEMPLATES_DIR });
  return app;
}

/**
 * With tracing on (src/telemetry.ts): one span per request named after its route, carrying the
 * request id that its log line carries too. Loaded only then.
 */
async function traceRequests(app: FastifyInstance): Promise<void> {
  const { FastifyOtelInstrumentation } = await import('@fastify/otel');
  const instrumentation = new FastifyOtelInstrumentation({
    requestHook: (span, request) => span.setAttribute('idp.request_id', request.id),
  });
  await app.register(instrumentation.plugin());
}

async function registerRoutes(app: FastifyInstance, config: Config, services: Services, basePath: string, metrics: Metrics): Promise<void> {
  const { keys, ephemeral, durable } = services;
  /** One audit line per event, on the request's logger, counted in the metrics too; and the outbox. */
  const audit = createRequestAudit(combineSinks(createLogSink(metrics), services.outboxSink));
  await app.register(discoveryRoutes, { config });
  await app.register(jwksRoutes, { keys });
  await registerBrowserRoutes(app, config, services, basePath, audit);
  await registerApiRoutes(app, config, services, basePath, audit);
  await app.register(assetRoutes, { templatesDir: TEMPLATES_DIR, brand: config.brand });
  await app.register(healthRoutes, { durable, ephemeral, source: services.source, keys });
  if (config.adminApi === 'public') await registerAdminApi(app, services, audit, { prefix: '', origin: new URL(config.baseUrl).origin + basePath });
  if (config.adminApi === 'public' && config.adminConsole) await registerConsole(app, { deps: createConsoleDeps(services, audit, pageContext(config, basePath)), templatesDir: TEMPLATES_DIR });
  // With a management port, the metrics are served there only: they tell more than the public needs.
  if (!config.management) await app.register(metricsRoutes, { metrics });
}

/** Authorize, the sign-in pages, end session and the upstream round trips. */
async function registerBrowserRoutes(app: FastifyInstance, config: Config, services: Services, basePath: string, audit: RequestAudit): Promise<void> {
  const { clock, keys, clients, interactions, sessions, signInFlow: flow, stepForms: forms, upstream } = services;
  const secureCookies = config.baseUrl.startsWith('https:');
  const page = pageContext(config, basePath);
  const forgotPassword = services.recovery
    ? (interactionId: string) => `${basePath}/account/recover?${new URLSearchParams({ interaction: interactionId })}`
    : config.passwordResetUrl === undefined ? undefined : () => config.passwordResetUrl ?? '';
  const adapter = createFlowAdapter({ page, secureCookies, audit, basePath, forgotPassword });
  await app.register(authorizeRoutes, { clients, flow, adapter, rateLimiter: services.authorizeRateLimiter, hintVerification: { issuer: config.issuer, keys, clock } });
  await app.register(interactionRoutes, { forms, adapter });
  await app.register(recoverRoutes, { recovery: services.recovery, adapter, page, secureCookies, rateLimiter: services.authorizeRateLimiter });
  await app.register(logoutRoutes, { page, secureCookies, audit, endSession: services.endSession });
  await app.register(accountRoutes, { account: services.account, flow, adapter, page, rateLimiter: services.authorizeRateLimiter });
  if (upstream) await app.register(upstreamRoutes, { ...upstream, page, adapter, interactions, sessions, flow });
}

/** Token, userinfo, revocation (with per-client CORS) and introspection (without). */
async function registerApiRoutes(app: FastifyInstance, config: Config, services: Services, basePath: string, audit: RequestAudit): Promise<void> {
  const { clock, keys, users, clients } = services;
  await app.register(async (corsScope) => {
    await registerClientCors(corsScope, { clients, basePath });
    await corsScope.register(tokenRoutes, { clients, clock, grants: services.grants, audit, rateLimiter: services.tokenRateLimiter });
    await corsScope.register(userinfoRoutes, { issuer: config.issuer, clock, keys, revocations: services.revocations, users, clients });
    await corsScope.register(revokeRoutes, { clients, revocation: services.tokenEndpoints, audit });
  });
  // RFC 7662 §4: introspection never answers browsers of another origin.
  await app.register(introspectRoutes, { clients, introspection: services.tokenEndpoints, audit });
}

/** What the pages need to know: where they live, and the brand they show. */
function pageContext(config: Config, basePath: string): PageContext {
  return { basePath, brand: { name: config.brand.name, hasLogo: config.brand.logo !== undefined } };
}
