/**
 * Reading a call to the administration API: the body against its operation's schema (each wrong
 * field named by a JSON pointer), the query, the media type, If-Match.
 */
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { schemaProblems } from '../../admin/input-schemas.ts';
import { ApiProblem, jsonPointer } from '../error-handler.ts';
import type { Operation } from './operation.ts';

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** RFC 9110 §15.5.16: a body in another media type than the operation's is 415, before it is read as one. */
export function readBody(op: Operation, request: FastifyRequest): unknown {
  if (!op.body) return undefined;
  const sent = hasBody(request);
  const mediaType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (sent && mediaType !== op.body.mediaType) throw new ApiProblem(415, `The request body must be ${op.body.mediaType}.`);
  if (!sent || request.body === undefined) {
    if (op.body.optional) return undefined;
    throw new ApiProblem(400, `A JSON body (${op.body.mediaType}) is required.`);
  }
  return parsed(op.body.schema, request.body, (issues) => schemaProblems(issues).map((p) => ({ pointer: jsonPointer(p.path), detail: p.message })));
}

/** The query, each wrong parameter named: a query only asks, so the wording says nothing of changes. */
export function readQuery(op: Operation, request: FastifyRequest): unknown {
  if (!op.query) return {};
  const result = op.query.safeParse(request.query ?? {}, { reportInput: true });
  if (result.success) return result.data;
  const problems = schemaProblems(result.error.issues).map((p) => ({
    parameter: String(p.path[0] ?? 'query'),
    detail: p.message === 'unknown field' ? 'unknown parameter' : p.message,
  }));
  const named = problems.map((p) => `${p.parameter}: ${p.detail}`).join('; ');
  throw new ApiProblem(400, `The query has ${problems.length === 1 ? 'a wrong parameter' : `${problems.length} wrong parameters`}: ${named}.`, problems);
}

function parsed<T>(schema: z.ZodType<T>, value: unknown, fields: (issues: z.core.$ZodIssue[]) => ConstructorParameters<typeof ApiProblem>[2]): T {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const problems = fields(result.error.issues) ?? [];
  throw new ApiProblem(400, `The request has ${problems.length} wrong field(s): nothing was changed.`, problems);
}

/**
 * The version If-Match names (RFC 9110 §13.1.1, strong comparison): 428 without it (RFC 6585
 * §3), 412 when it names no version this service made (a weak tag never matches).
 */
export function requireIfMatch(request: FastifyRequest): number {
  const header = request.headers['if-match'];
  if (header === undefined || header.trim() === '') {
    throw new ApiProblem(428, 'This request needs If-Match with the ETag of the resource as last read, so that no change made since is lost.');
  }
  const match = /^\s*"(\d{1,15})"\s*$/.exec(header);
  if (!match?.[1]) throw new ApiProblem(412, 'If-Match names no current version of this resource: read it again.');
  return Number(match[1]);
}

/** An ETag for a row version: strong, quoted (RFC 9110 §8.8.3). */
export const etagOf = (version: number) => `"${version}"`;

/**
 * RFC 9110 §13.1.2: a GET whose If-None-Match names the current version (weak comparison, or
 * `*`) is answered 304 Not Modified, without the representation the client holds already.
 */
export function notModified(request: FastifyRequest, version: number): boolean {
  const header = request.headers['if-none-match'];
  if ((request.method !== 'GET' && request.method !== 'HEAD') || header === undefined) return false;
  const tags = header.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  return tags.includes('*') || tags.includes(etagOf(version));
}
