/**
 * buildApp(config, services): the Fastify application with every route plugin. It listens on
 * nothing by itself, so tests can use it in process and main.ts can start it.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import cors from '@fastify/cors';
import formbody from '@fastify/formbody';
import view from '@fastify/view';
import { Eta } from 'eta';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { OAuthError } from './errors.ts';
import { createLogSink } from './events/record.ts';
import { createRequestAudit, type RequestAudit } from './routes/shared/audit.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { assetRoutes } from './routes/assets.ts';
import { authorizeRoutes } from './routes/authorize.ts';
import { discoveryRoutes } from './routes/discovery.ts';
import { clientErrorResponse, registerErrorHandler, sendOAuthError, toOAuthError } from './routes/error-handler.ts';
import { healthRoutes } from './routes/health.ts';
import { interactionRoutes } from './routes/interaction.ts';
import { introspectRoutes } from './routes/introspect.ts';
import { logoutRoutes } from './routes/logout.ts';
import { revokeRoutes } from './routes/revoke.ts';
import { createHostCheck } from './routes/shared/host.ts';
import type { PageContext } from './routes/shared/pages.ts';
import { jwksRoutes } from './routes/jwks.ts';
import { tokenRoutes } from './routes/token.ts';
import { upstreamRoutes } from './routes/upstream.ts';
import { userinfoRoutes } from './routes/userinfo.ts';
import { createFlowAdapter } from './routes/shared/flow-adapter.ts';
import type { Services } from './services.ts';
import { basePathOf } from './services-protocol.ts';

const TEMPLATES_DIR = join(import.meta.dirname, '..', 'templates');

/** OAuth and OIDC requests are small forms; anything larger is refused with 413. */
const BODY_LIMIT_BYTES = 64 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export async function buildApp(config: Config, services: Services, logger: Logger): Promise<FastifyInstance> {
  const headers = securityHeaders(config);
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // Fastify's own two lines per request are replaced by our one (addRequestLog).
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: trustProxySetting(config.trustProxy),
    bodyLimit: BODY_LIMIT_BYTES,
    // A proxy's request id is kept when it looks like one, so log lines can be joined across hops.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Errors found before routing (a malformed URL, a bad header) keep the OAuth error shape.
    frameworkErrors: (error, request, reply) => {
      setResponseHeaders(request, reply, headers);
      void sendOAuthError(reply, toOAuthError(error), 400);
    },
    clientErrorHandler: (error, socket) => {
      if (socket.writable) socket.end(clientErrorResponse(error));
      else socket.destroy();
    },
  });

  const basePath = basePathOf(config.baseUrl);
  const page = pageContext(config, basePath);
  const metrics = createMetrics({ durable: services.durable, ephemeral: services.ephemeral });
  if (config.otlpEndpoint) await traceRequests(app);
  registerErrorHandler(app, { issuer: config.issuer, page });
  prepareEveryRequest(app, { metrics, headers, refuseForeignHost: foreignHostCheck(config, basePath) });
  addRequestLog(app, metrics);
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
  if (config.management) serveManagementPort(app, config.management, services, metrics, logger);
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

/**
 * IDP_MANAGEMENT_PORT: /metrics, /healthz and /readyz on a port of their own (loopback by
 * default), for Prometheus and probes inside the network. It listens when the public app gets
 * ready (a port in use fails the start) and closes with it.
 */
function serveManagementPort(app: FastifyInstance, management: NonNullable<Config['management']>, services: Services, metrics: Metrics, logger: Logger): void {
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

async function registerRoutes(app: FastifyInstance, config: Config, services: Services, basePath: string, metrics: Metrics): Promise<void> {
  const { keys, ephemeral, durable } = services;
  /** One audit line per event, on the request's logger, counted in the metrics too. */
  const audit = createRequestAudit(createLogSink(metrics));
  await app.register(discoveryRoutes, { config });
  await app.register(jwksRoutes, { keys });
  await registerBrowserRoutes(app, config, services, basePath, audit);
  await registerApiRoutes(app, config, services, basePath, audit);
  await app.register(assetRoutes, { templatesDir: TEMPLATES_DIR, brand: config.brand });
  await app.register(healthRoutes, { durable, ephemeral, source: services.source, keys });
  // With a management port, the metrics are served there only: they tell more than the public needs.
  if (!config.management) await app.register(metricsRoutes, { metrics });
}

/** Authorize, the sign-in pages, end session and the upstream round trips. */
async function registerBrowserRoutes(app: FastifyInstance, config: Config, services: Services, basePath: string, audit: RequestAudit): Promise<void> {
  const { clock, keys, clients, interactions, sessions, signInFlow: flow, stepForms: forms, upstream } = services;
  const secureCookies = config.baseUrl.startsWith('https:');
  const page = pageContext(config, basePath);
  const adapter = createFlowAdapter({ page, secureCookies, audit });
  await app.register(authorizeRoutes, { clients, flow, adapter, rateLimiter: services.authorizeRateLimiter, hintVerification: { issuer: config.issuer, keys, clock } });
  await app.register(interactionRoutes, { forms, adapter });
  await app.register(logoutRoutes, { page, secureCookies, audit, endSession: services.endSession });
  if (upstream) await app.register(upstreamRoutes, { ...upstream, page, adapter, interactions, sessions, flow });
}

/** Token, userinfo, revocation (with per-client CORS) and introspection (without). */
async function registerApiRoutes(app: FastifyInstance, config: Config, services: Services, basePath: string, audit: RequestAudit): Promise<void> {
  const { clock, keys, users, clients } = services;
  await app.register(async (corsScope) => {
    // The plugin's OPTIONS route is global: the path decides, so introspection never says yes.
    const corsPaths = new Set(['/connect/token', '/connect/userinfo', '/connect/revoke'].map((p) => `${basePath}${p}`));
    const corsOptions = (origin: string | false) => ({ origin, methods: ['GET', 'POST'], allowedHeaders: ['authorization', 'content-type'], maxAge: 600 });
    const notAllowed = corsOptions(false);
    await corsScope.register(cors, {
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
    await corsScope.register(tokenRoutes, { clients, clock, grants: services.grants, audit, rateLimiter: services.tokenRateLimiter });
    await corsScope.register(userinfoRoutes, { issuer: config.issuer, clock, keys, revocations: services.revocations, users, clients });
    await corsScope.register(revokeRoutes, { clients, revocation: services.tokenEndpoints, audit });
  });
  // RFC 7662 §4 and interface.md: introspection never answers browsers of another origin.
  await app.register(introspectRoutes, { clients, introspection: services.tokenEndpoints, audit });
}

/** What the pages need to know: where they live, and the brand they show. */
function pageContext(config: Config, basePath: string): PageContext {
  return { basePath, brand: { name: config.brand.name, hasLogo: config.brand.logo !== undefined } };
}

/** IDP_TRUST_PROXY as Fastify takes it; a number is a count of trusted hops. */
function trustProxySetting(value: Config['trustProxy']): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof value === 'number' ? (_address, hop) => hop < value : value;
}

/**
 * Probes of load balancers call by address; everything else must name the service's host. The
 * refusal for a request naming another, or undefined.
 */
function foreignHostCheck(config: Config, basePath: string): (request: FastifyRequest) => OAuthError | undefined {
  const isOwnHost = createHostCheck(config.baseUrl);
  const probes = new Set(['/healthz', '/readyz', '/metrics'].map((p) => `${basePath}${p}`));
  // Says what was expected and which settings decide it: the usual cause is a proxy that
  // rewrites Host, or a base URL left at its default.
  const refusal = `This request names another host than this service's address: it answers for ${new URL(config.baseUrl).host} (IDP_BASE_URL). `
    + 'Behind a proxy, pass the Host header on, or set IDP_TRUST_PROXY so that X-Forwarded-Host counts.';
  return (request) => {
    if (isOwnHost(request.host) || probes.has(request.url.split('?')[0] ?? '')) return undefined;
    return new OAuthError('invalid_request', refusal, { redirectable: false, detail: `host ${request.host}` });
  };
}

/**
 * What every response carries. Its Content-Security-Policy is for data that must never render
 * as a document; pages and the logo replace it with their own.
 */
function securityHeaders(config: Config): Readonly<Record<string, string>> {
  return {
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    ...(config.baseUrl.startsWith('https:') ? { 'strict-transport-security': 'max-age=31536000; includeSubDomains' } : {}),
  };
}

function setResponseHeaders(request: FastifyRequest, reply: FastifyReply, headers: Readonly<Record<string, string>>): void {
  reply.headers(headers);
  reply.header('x-request-id', request.id);
}

/**
 * The first hook of all: it counts the request in flight ('close' fires on every response, also
 * one whose client went away before it was sent, so every request counted is also uncounted),
 * sets the headers every response carries (before anything can fail: Fastify keeps them on its
 * error responses), and refuses a foreign Host. A request the router refuses before any hook
 * runs (frameworkErrors) gets the same headers there.
 */
function prepareEveryRequest(app: FastifyInstance, options: {
  metrics: Metrics;
  headers: Readonly<Record<string, string>>;
  refuseForeignHost: (request: FastifyRequest) => OAuthError | undefined;
}): void {
  const { metrics, headers, refuseForeignHost } = options;
  const answered = () => metrics.inFlight.dec();
  app.addHook('onRequest', (request, reply, done) => {
    metrics.inFlight.inc();
    reply.raw.on('close', answered);
    setResponseHeaders(request, reply, headers);
    done(refuseForeignHost(request));
  });
}

/**
 * One log line per request: route, status and the source address (as IDP_TRUST_PROXY resolves
 * it), never the query string or the body.
 */
function addRequestLog(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unknown';
    const status = reply.statusCode;
    const elapsed = reply.elapsedTime;
    request.log.info({ method: request.method, route, status, ms: Math.round(elapsed * 10) / 10, source_address: request.ip }, 'request');
    metrics.requests.record(route, request.method, status, elapsed / 1000);
    if (status === 429) metrics.rateLimited.inc(route.endsWith('/connect/authorize') ? 'authorize' : 'token');
    done();
  });
}
