/**
 * The OpenAPI 3.1 document of the administration API, made from the operations themselves: their
 * paths, and the zod schemas that validate their bodies and queries (z.toJSONSchema), so the
 * document cannot drift from what the routes accept.
 */
import { z } from 'zod';
import { ADMIN_API, ADMIN_API_READONLY, ADMIN_CONSOLE_WEBHOOKS, scopesAllowing } from '../../admin/api-access.ts';
import type { Operation } from './operation.ts';

type Json = Record<string, unknown>;

function jsonSchema(schema: z.ZodType): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Json;
  return rest;
}

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });

/** The errors an operation may answer, besides its own answers. */
function errorResponses(op: Operation): Json {
  const withPath = op.path.includes('{');
  return {
    ...(op.body || op.query || op.idempotent ? { 400: problem('A malformed request: each wrong field named in errors') } : {}),
    401: problem('No valid access token (WWW-Authenticate: Bearer error="invalid_token")'),
    403: problem('The token lacks the scope (WWW-Authenticate: Bearer error="insufficient_scope")'),
    ...(withPath ? { 404: problem('No such resource') } : {}),
    ...(op.method === 'POST' || op.method === 'DELETE' ? { 409: problem('It exists already, or the change conflicts with its state') } : {}),
    ...(op.ifMatch ? { 412: problem('If-Match names a version that is no longer current'), 428: problem('If-Match is missing') } : {}),
    ...(op.body ? { 415: problem(`The body is not ${op.body.mediaType}`) } : {}),
    ...(op.idempotent ? { 422: problem('The Idempotency-Key was used with another request') } : {}),
  };
}

function parameters(op: Operation): Json[] {
  const inPath = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  const query = op.query ? jsonSchema(op.query) : { properties: {} };
  const required = new Set((query.required as string[] | undefined) ?? []);
  const inQuery = Object.entries((query.properties ?? {}) as Record<string, Json>).map(([name, schema]) => ({
    name, in: 'query', required: required.has(name), ...(schema.description ? { description: schema.description } : {}), schema,
  }));
  const headers = [
    ...(op.ifMatch ? [{ name: 'If-Match', in: 'header', required: true, description: 'The ETag of the resource as last read', schema: { type: 'string' } }] : []),
    ...(op.idempotent ? [{ name: 'Idempotency-Key', in: 'header', required: false, description: 'Sent again within 24 hours, the same request gets the first answer', schema: { type: 'string', maxLength: 255 } }] : []),
  ];
  return [...inPath, ...inQuery, ...headers];
}

function operationObject(op: Operation): Json {
  const own = Object.fromEntries(Object.entries(op.responses).map(([status, description]) => [status, { description }]));
  return {
    operationId: op.operationId,
    summary: op.summary,
    tags: [op.path.split('/')[1]],
    // Any one of the scopes will do.
    security: scopesAllowing(op.method, op.area ?? 'admin').map((scope) => ({ oauth2: [scope] })),
    parameters: parameters(op),
    ...(op.body ? { requestBody: { required: !op.body.optional, content: { [op.body.mediaType]: { schema: jsonSchema(op.body.schema) } } } } : {}),
    responses: { ...own, ...errorResponses(op) },
  };
}

export function openApiDocument(operations: readonly Operation[], where: { serverUrl: string; tokenUrl: string }): Json {
  const paths: Record<string, Json> = {};
  for (const op of operations) paths[op.path] = { ...paths[op.path], [op.method.toLowerCase()]: operationObject(op) };
  paths['/openapi.json'] = { get: { operationId: 'openApiDocument', summary: 'This document', security: [], responses: { 200: { description: 'OpenAPI 3.1' } } } };
  return {
    openapi: '3.1.0',
    info: { title: 'Administration API', version: '1' },
    servers: [{ url: where.serverUrl }],
    security: [{ oauth2: [ADMIN_API] }],
    paths,
    components: {
      securitySchemes: {
        oauth2: {
          type: 'oauth2',
          description: 'An access token of the client credentials grant, for a client whose scopes column lists the scope.',
          flows: {
            clientCredentials: {
              tokenUrl: where.tokenUrl,
              scopes: {
                [ADMIN_API]: 'Everything',
                [ADMIN_API_READONLY]: 'Reading only (GET and HEAD)',
                [ADMIN_CONSOLE_WEBHOOKS]: 'The webhook resources only',
              },
            },
          },
        },
      },
      schemas: {
        Problem: {
          type: 'object',
          description: 'RFC 9457 problem details',
          required: ['type', 'title', 'status', 'detail'],
          properties: {
            type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' },
            errors: {
              type: 'array',
              items: { type: 'object', properties: { pointer: { type: 'string', description: 'JSON pointer into the body (RFC 6901)' }, parameter: { type: 'string' }, detail: { type: 'string' } } },
            },
          },
        },
      },
    },
  };
}
