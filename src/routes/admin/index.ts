/**
 * The administration API under `/admin/v1`: every operation of operations.ts as a route that
 * authenticates the caller, reads the request, calls src/admin/, and answers. Its errors are
 * RFC 9457 problem details (error-handler.ts), Fastify's own included.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorizeAdminCall, scopesAllowing } from '../../admin/api-access.ts';
import type { AuditEvent } from '../../events/audit-events.ts';
import { ApiProblem, registerProblemHandlers } from '../error-handler.ts';
import { createAdminApiDeps, type AdminApiDeps, type AdminApiServices } from './deps.ts';
import { requestContext, type RequestAudit } from '../shared/audit.ts';
import { ADMIN_OPERATIONS } from './operations.ts';
import { openApiDocument } from './openapi.ts';
import type { Answer, Call, Operation } from './operation.ts';
import { etagOf, notModified, readBody, readQuery, requireIfMatch } from './request.ts';

export const ADMIN_BASE = '/admin/v1';

/**
 * The API under `{prefix}/admin/v1` of `app` (the public port's base path, or the management
 * port's root). The OpenAPI document names the public token endpoint either way.
 */
export async function registerAdminApi(app: FastifyInstance, services: AdminApiServices, audit: RequestAudit, where: { prefix: string; origin: string }): Promise<void> {
  const serverUrl = `${where.origin}${where.prefix}${ADMIN_BASE}`;
  await app.register(adminApiRoutes, { prefix: `${where.prefix}${ADMIN_BASE}`, deps: createAdminApiDeps(services, audit), serverUrl, tokenUrl: `${services.config.baseUrl}/connect/token` });
}

/** `/clients/{client_id}` -> `/clients/:client_id`. */
const fastifyPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** Registered with the prefix ADMIN_BASE (after the base URL's path, on the public port). */
export interface AdminApiOptions {
  deps: AdminApiDeps;
  /** Where the API is reached (the OpenAPI document's server) and where tokens come from. */
  serverUrl: string;
  tokenUrl: string;
  operations?: readonly Operation[];
}

export async function adminApiRoutes(app: FastifyInstance, options: AdminApiOptions): Promise<void> {
  const operations = options.operations ?? ADMIN_OPERATIONS;
  registerProblemHandlers(app);
  // JSON only here (the rest of the service takes forms): any other media type is 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/json', 'application/merge-patch+json'], { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new ApiProblem(400, 'The request body is not JSON (RFC 8259).'), undefined);
    }
  });
  const document = openApiDocument(operations, { serverUrl: options.serverUrl, tokenUrl: options.tokenUrl });
  app.get('/openapi.json', async (_request, reply) => reply.header('cache-control', 'no-cache').send(document));
  for (const op of operations) {
    app.route({ method: op.method, url: fastifyPath(op.path), handler: (request, reply) => handleCall(op, request, reply, options.deps) });
  }
}

async function handleCall(op: Operation, request: FastifyRequest, reply: FastifyReply, deps: AdminApiDeps): Promise<FastifyReply> {
  const caller = await authorizeAdminCall(request.headers.authorization, scopesAllowing(request.method, op.area ?? 'admin'), deps.access);
  // A budget per client, as the token endpoint has: one automation gone wrong cannot take the
  // database from the others (429 with Retry-After, problem details).
  await deps.rateLimiter.consume(`admin:${caller.clientId}`);
  const events: AuditEvent[] = [];
  const call: Call<unknown, unknown> = {
    caller,
    params: request.params as Record<string, string>,
    body: readBody(op, request),
    query: readQuery(op, request),
    ifVersion: op.ifMatch ? requireIfMatch(request) : undefined,
    actor: {
      by: { actor: 'api', client_id: caller.clientId },
      context: requestContext(request, { client_id: caller.clientId }),
      logged: (event) => events.push(event),
    },
    deps,
  };
  const key = request.headers['idempotency-key'];
  if (Array.isArray(key)) throw new ApiProblem(400, 'Idempotency-Key must be sent once.');
  if (!op.idempotent || key === undefined) return send(reply, await run(op, call, events, request, deps));
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) throw new ApiProblem(400, 'Idempotency-Key must be 1 to 255 visible ASCII characters.', [{ parameter: 'Idempotency-Key', detail: 'must be 1 to 255 visible ASCII characters' }]);
  const claim = await deps.idempotency.claim<Answer>({ clientId: caller.clientId, key, method: op.method, path: request.url.split('?')[0] ?? '', body: call.body });
  if (claim.kind === 'replay') return send(reply.header('idempotent-replayed', 'true'), claim.answer);
  let answer: Answer;
  try {
    answer = await run(op, call, events, request, deps);
  } catch (error) {
    // A refused request changed nothing: the key may be used again.
    await claim.giveUp().catch(() => {});
    throw error;
  }
  await claim.keep(answer);
  return send(reply, answer);
}

/**
 * The operation, then the log lines of its audit events, which src/admin/ wrote to the outbox in
 * their change's transaction: a refused call records none.
 */
async function run(op: Operation, call: Call<unknown, unknown>, events: AuditEvent[], request: FastifyRequest, deps: AdminApiDeps): Promise<Answer> {
  const answer = await op.handle(call);
  for (const event of events) deps.audit(request, event, { client_id: call.caller.clientId }, { inOutbox: true });
  return answer;
}

function send(reply: FastifyReply, answer: Answer): FastifyReply {
  reply.code(answer.status).header('cache-control', 'no-store');
  if (answer.version !== undefined) reply.header('etag', etagOf(answer.version));
  if (answer.version !== undefined && answer.status === 200 && notModified(reply.request, answer.version)) return reply.code(304).send();
  const base = `${reply.request.url.slice(0, reply.request.url.indexOf(ADMIN_BASE))}${ADMIN_BASE}`;
  if (answer.location) reply.header('location', `${base}${answer.location}`);
  if (answer.next) reply.header('link', `<${reply.request.url.split('?')[0] ?? ''}?${new URLSearchParams(answer.next).toString()}>; rel="next"`);
  return answer.body === undefined ? reply.send() : reply.send(answer.body);
}
