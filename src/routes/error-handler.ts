/**
 * The ONE place where errors become HTTP. At the API endpoints: JSON with `Cache-Control:
 * no-store` (and `WWW-Authenticate` for 401). At the browser endpoints: a redirect to the
 * client once its redirect URI is trusted, else the service's error page. Fastify's own errors
 * (body too large, unsupported media type) become `invalid_request`; anything else is logged
 * and answered as a generic `server_error` with no detail.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError, type AdminErrorCode, type FieldPath } from '../admin/errors.ts';
import type { ProblemWire } from '../admin/answer-schemas.ts';
import { OAuthError } from '../errors.ts';
import { isStoreUnavailable } from '../store/unavailable.ts';
import type { AuthorizationTarget } from '../sessions/sign-in/authorization-request.ts';
import { respondToClient } from './shared/authorization-response.ts';
import { NOT_FOUND_PAGE, errorPageContent, type ErrorPageContent } from './shared/error-page.ts';
import { renderPage, type PageContext } from './shared/pages.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How an endpoint spells its 401 challenge (RFC 6749 §5.2 for Basic, RFC 6750 §3 for Bearer). */
    challenge?: 'Basic' | 'Bearer';
    /** A browser endpoint: errors are pages or redirects, never JSON. */
    page?: boolean;
  }
  interface FastifyRequest {
    /** Set once client and redirect URI are trusted: errors may then go back to the client. */
    authorizationTarget?: AuthorizationTarget;
  }
}

export function toOAuthError(error: unknown): OAuthError {
  if (error instanceof OAuthError) return error;
  if (isStoreUnavailable(error)) {
    return new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable. Try again shortly.', {
      detail: error instanceof Error ? error.message : String(error),
      redirectable: false,
      retryAfter: 5,
    });
  }
  const fastifyError = error as Partial<FastifyError>;
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new OAuthError('invalid_request', requestProblem(fastifyError), { detail: fastifyError.message, redirectable: false });
  }
  return new OAuthError('server_error', 'The server met an unexpected condition.', {
    detail: error instanceof Error ? error.message : String(error),
    redirectable: false,
  });
}

function requestProblem(error: Partial<FastifyError>): string {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body is too large.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'The request body must be application/x-www-form-urlencoded.';
    default:
      return 'The request is malformed.';
  }
}

/** Sends an OAuth error as JSON; `status` overrides the error's own for a body too large (413). */
export function sendOAuthError(reply: FastifyReply, error: OAuthError, status = error.status): FastifyReply {
  reply.code(status).header('cache-control', 'no-store').header('pragma', 'no-cache');
  if (status === 401) {
    const scheme = reply.request.routeOptions.config?.challenge ?? 'Basic';
    reply.header('www-authenticate', scheme === 'Bearer'
      ? `Bearer error="${error.code}", error_description="${error.description.replace(/["\\]/g, "'")}"`
      : 'Basic realm="idp", charset="UTF-8"');
  }
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  return reply.send({ error: error.code, error_description: error.description });
}

/** At a browser endpoint: back to the client when that is allowed, else our own page (4xx). */
function sendPageError(request: FastifyRequest, reply: FastifyReply, error: OAuthError, issuer: string, page: PageContext, httpStatus: number): FastifyReply {
  const target = request.authorizationTarget;
  if (target && error.redirectable) {
    return respondToClient(reply, target, issuer, { error: error.code, error_description: error.description });
  }
  // 413 (body too large), 429 (over a rate limit) and 5xx keep their status; the rest are 400.
  const status = httpStatus === 413 || httpStatus === 429 || error.status >= 500 ? httpStatus : 400;
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  const content = errorPageContent(error, { route: request.routeOptions.url, trustedRedirectUri: target?.redirectUri, basePath: page.basePath, status });
  return renderErrorPage(request, reply, page, { ...content, error: error.code, description: error.description }, status);
}

/** The error page: words for people, then the code, description and request id for support. */
function renderErrorPage(request: FastifyRequest, reply: FastifyReply, page: PageContext, data: ErrorPageContent & { error: string; description: string }, status: number): FastifyReply {
  // The request id is in the log line of this request: a user can quote it to support.
  return renderPage(reply, page, 'error', { ...data, status, requestId: request.id }, { status });
}

/** A browser navigating (HTML asked for before JSON) rather than a program calling an API. */
function wantsPage(request: FastifyRequest): boolean {
  const types = (request.headers.accept ?? '').split(',').map((part) => part.split(';')[0]?.trim().toLowerCase());
  const html = types.indexOf('text/html');
  const json = types.indexOf('application/json');
  return html !== -1 && (json === -1 || html < json);
}

export function registerErrorHandler(app: FastifyInstance, options: { issuer: string; page: PageContext }): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (abortedByClient(request)) {
      // Nobody is left to answer: the client closed the connection while sending (its doing, not a dependency's).
      request.log.info({ detail: error instanceof Error ? error.message : String(error) }, 'request aborted by the client');
      return reply.code(400).send();
    }
    const oauthError = toOAuthError(error);
    if (oauthError.code === 'server_error') request.log.error({ err: oauthError.detail }, 'unexpected error');
    else if (oauthError.code === 'temporarily_unavailable') request.log.warn({ detail: oauthError.detail }, 'dependency unavailable');
    else if (oauthError.detail) request.log.info({ error: oauthError.code, detail: oauthError.detail }, 'request refused');
    const status = (error as Partial<FastifyError>).statusCode === 413 ? 413 : oauthError.status;
    if (request.routeOptions.config.page) return sendPageError(request, reply, oauthError, options.issuer, options.page, status);
    return sendOAuthError(reply, oauthError, status);
  });
  app.setNotFoundHandler((request, reply) => {
    if (!wantsPage(request)) return reply.code(404).header('cache-control', 'no-store').send({ error: 'not_found', error_description: 'No such endpoint.' });
    return renderErrorPage(request, reply, options.page, { ...NOT_FOUND_PAGE, error: 'not_found', description: 'No such page.' }, 404);
  });
}

/** An HTTP refusal of the administration API that no lower layer makes (a missing If-Match, a media type). */
export class ApiProblem extends Error {
  override name = 'ApiProblem';
  readonly status: number;
  readonly errors: readonly ProblemField[];
  constructor(status: number, detail: string, errors: readonly ProblemField[] = []) {
    super(detail);
    this.status = status;
    this.errors = errors;
  }
}

/** One wrong field: a JSON pointer into the body (RFC 6901), or the query parameter's name. */
export type ProblemField = { pointer: string; detail: string } | { parameter: string; detail: string };

/** `['redirect_uris', 1]` -> `/redirect_uris/1` (RFC 6901: `~` and `/` escaped). */
export function jsonPointer(path: FieldPath): string {
  return path.map((key) => `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

const ADMIN_STATUS: Record<AdminErrorCode, number> = { invalid: 400, not_found: 404, conflict: 409, stale: 412, key_reused: 422 };
const TITLES: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict',
  412: 'Precondition Failed', 413: 'Content Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Content',
  428: 'Precondition Required', 429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable',
};

/** Any error of an administration API call as RFC 9457 problem details (with the OAuth error, for 401/403). */
function toProblem(error: unknown): { status: number; detail: string; errors: readonly ProblemField[]; oauth?: OAuthError } {
  if (error instanceof ApiProblem) return { status: error.status, detail: error.message, errors: error.errors };
  if (error instanceof AdminError) {
    return { status: ADMIN_STATUS[error.code], detail: error.message, errors: error.problems.map((p) => ({ pointer: jsonPointer(p.path), detail: p.message })) };
  }
  const fastifyError = error as Partial<FastifyError>;
  if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return { status: 415, detail: 'The request body must be application/json (application/merge-patch+json for PATCH).', errors: [] };
  const oauth = toOAuthError(error);
  const status = fastifyError.statusCode === 413 ? 413 : oauth.status;
  return { status, detail: oauth.description, errors: [], oauth };
}

/** Sends a problem document (`application/problem+json`), never cached; a 401 or 403 with its Bearer challenge. */
export function sendProblem(reply: FastifyReply, error: unknown): FastifyReply {
  const { status, detail, errors, oauth } = toProblem(error);
  if (oauth?.code === 'server_error') reply.request.log.error({ err: oauth.detail }, 'unexpected error');
  else if (oauth?.detail) reply.request.log.info({ error: oauth.code, detail: oauth.detail }, 'request refused');
  reply.code(status).header('cache-control', 'no-store').header('content-type', 'application/problem+json; charset=utf-8');
  if (status === 401) reply.header('www-authenticate', 'Bearer error="invalid_token"');
  if (status === 403 && oauth?.scope) reply.header('www-authenticate', `Bearer error="insufficient_scope", scope="${oauth.scope}"`);
  if (oauth?.retryAfter !== undefined) reply.header('retry-after', String(oauth.retryAfter));
  const problem: ProblemWire = { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, ...(errors.length > 0 ? { errors: [...errors] } : {}) };
  return reply.send(JSON.stringify(problem));
}

/** Inside the administration API's prefix: every error, an unknown route too, is problem details. */
export function registerProblemHandlers(scope: FastifyInstance): void {
  scope.setErrorHandler((error: unknown, _request: FastifyRequest, reply: FastifyReply) => sendProblem(reply, error));
  scope.setNotFoundHandler((_request, reply) => sendProblem(reply, new ApiProblem(404, 'No such resource, or not with this method (see openapi.json).')));
}

/**
 * The client closed the connection before its request was read whole (Node reports ECONNRESET
 * "aborted" on the request stream, which would otherwise read as a database or store outage).
 */
function abortedByClient(request: FastifyRequest): boolean {
  return request.raw.readableAborted;
}

/**
 * What Node's HTTP parser refuses before Fastify sees a request, answered in the OAuth shape.
 * `rawPacket` holds the bytes read so far: a HEAD request gets the head only (RFC 9110 §9.3.2).
 */
export function clientErrorResponse(error: { code?: string; rawPacket?: unknown }): string {
  const [status, reason] = error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large'] : [400, 'Bad Request'];
  const body = JSON.stringify({ error: 'invalid_request', error_description: 'The request is malformed.' });
  const head = Buffer.isBuffer(error.rawPacket) && /^HEAD /i.test(error.rawPacket.subarray(0, 5).toString('latin1'));
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${head ? '' : body}`;
}
