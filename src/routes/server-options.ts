/**
 * How the public port's Fastify server is made: its logger, proxies trusted, request ids, the
 * body limit, and the answers to what is refused before routing, in the OAuth error shape.
 */
import { randomUUID } from 'node:crypto';
import { LogController, type FastifyBaseLogger, type FastifyServerOptions } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { basePathOf } from '../composition/protocol.ts';
import { ApiProblem, clientErrorResponse, sendOAuthError, sendProblem, toOAuthError } from './error-handler.ts';
import { setResponseHeaders } from './shared/security-headers.ts';

/** OAuth and OIDC requests are small forms; anything larger is refused with 413. */
const BODY_LIMIT_BYTES = 64 * 1024;
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function serverOptions(config: Pick<Config, 'trustProxy' | 'baseUrl' | 'adminApi'>, logger: Logger, headers: Readonly<Record<string, string>>) {
  // The administration API answers in problem details, what the router refuses too.
  const adminPrefix = config.adminApi === 'public' ? `${basePathOf(config.baseUrl)}/admin/v1/` : undefined;
  return {
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
      if (adminPrefix && request.url.startsWith(adminPrefix)) void sendProblem(reply, new ApiProblem(400, 'The request is malformed.'));
      else void sendOAuthError(reply, toOAuthError(error), 400);
    },
    clientErrorHandler: (error, socket) => {
      if (socket.writable) socket.end(clientErrorResponse(error));
      else socket.destroy();
    },
  } satisfies FastifyServerOptions & { loggerInstance: FastifyBaseLogger };
}

/** IDP_TRUST_PROXY as Fastify takes it; a number is a count of trusted hops. */
function trustProxySetting(value: Config['trustProxy']): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof value === 'number' ? (_address, hop) => hop < value : value;
}
