/**
 * The OpenAPI 3.1 document of the administration API, made from the operations themselves: their
 * paths, the zod schemas that validate their bodies and queries, and the zod schemas of their
 * answers (src/admin/answer-schemas.ts, the document's components), all through z.toJSONSchema, so
 * the document cannot drift from what the routes accept and answer.
 */
import { z } from 'zod';
import { ADMIN_API, ADMIN_API_READONLY, ADMIN_CONSOLE_WEBHOOKS, scopesAllowing } from '../../admin/api-access.ts';
import { isPageWire, problemWire, wireSchemas } from '../../admin/answer-schemas.ts';
import type { Operation, Response } from './operation.ts';

type Json = Record<string, unknown>;

const componentRef = (id: string) => `#/components/schemas/${id}`;

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) of a zod schema, as a request (`input`) or an answer (`output`). */
const toJsonSchemaOptions = (io: 'input' | 'output') => ({
  io, unrepresentable: 'any', target: 'draft-2020-12',
  // format: date-time says what zod's long pattern for it says; an integer's safe range goes without saying.
  override: ({ jsonSchema }: { jsonSchema: Json }) => {
    if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
    if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
    if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  },
}) as const;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, toJsonSchemaOptions(io)) as Json;
  return rest;
}

/** Every answer's schema, by its name in answer-schemas.ts; those within another are $refs. */
function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(wireSchemas, { ...toJsonSchemaOptions('output'), uri: componentRef });
  return Object.fromEntries(Object.entries(schemas).map(([id, { $schema: _dialect, $id: _id, ...schema }]) => [id, schema]));
}

/** A named answer schema by reference, any other inline. */
function answerSchema(schema: z.ZodType): Json {
  const id = wireSchemas.get(schema)?.id;
  return id === undefined ? jsonSchema(schema, 'output') : { $ref: componentRef(id) };
}

const header = (description: string, required: boolean) => ({ description, required, schema: { type: 'string' } });

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: answerSchema(problemWire) } } });

/** The errors an operation may answer, besides its own answers. */
function errorResponses(op: Operation): Json {
  const withPath = op.path.includes('{');
  return {
    ...(op.body || op.query || op.idempotent || withPath ? { 400: problem('A malformed request: each wrong field named in errors (or a path that is not percent-encoded UTF-8)') } : {}),
    401: problem('No valid access token (WWW-Authenticate: Bearer error="invalid_token")'),
    403: problem('The token lacks the scope (WWW-Authenticate: Bearer error="insufficient_scope")'),
    ...(withPath ? { 404: problem('No such resource') } : {}),
    ...(op.method === 'POST' || op.method === 'DELETE' || op.method === 'PATCH' ? { 409: problem('It exists already (a new name taken), or the change conflicts with its state') } : {}),
    ...(op.ifMatch ? { 412: problem('If-Match names a version that is no longer current'), 428: problem('If-Match is missing') } : {}),
    ...(op.body ? { 413: problem('The body is too large'), 415: problem(`The body is not ${op.body.mediaType}`) } : {}),
    ...(op.idempotent ? { 422: problem('The Idempotency-Key was used with another request') } : {}),
    429: {
      ...problem('The client spent its IDP_ADMIN_API_RATE_LIMIT calls of this minute: nothing was done'),
      headers: { 'Retry-After': header('Seconds until the next minute, when the client may call again', true) },
    },
    default: problem('The service met an unexpected condition (500), or a store it needs is unavailable (503)'),
  };
}

/** What a path parameter names, where its name alone does not say (by the path up to it). */
const PATH_PARAMETER_MEANING: Record<string, string> = {
  '/users/{id}': "The user's sub",
  '/users/{id}/sessions/{session_id}': "The id of a refresh token family or of a browser session of the user's",
  '/webhooks/{id}': "The endpoint's id (ep_…)",
  '/webhooks/{id}/deliveries/{delivery_id}': 'The delivery_id of an attempt',
};

/** RFC 9110 §13.1.2: a GET of one resource (its answer has an ETag) is 304 to an If-None-Match naming the current version. */
const answersNotModified = (op: Operation) => op.method === 'GET' && op.responses[200]?.etag === true;
const NOT_MODIFIED: Response = { description: 'Not Modified: If-None-Match names the current version (no body)', etag: true };

function parameters(op: Operation): Json[] {
  const inPath = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => {
    const meaning = PATH_PARAMETER_MEANING[op.path.slice(0, m.index + m[0].length)];
    return { name: m[1], in: 'path', required: true, ...(meaning ? { description: meaning } : {}), schema: { type: 'string' } };
  });
  const query = op.query ? jsonSchema(op.query) : { properties: {} };
  const required = new Set((query.required as string[] | undefined) ?? []);
  const inQuery = Object.entries((query.properties ?? {}) as Record<string, Json>).map(([name, schema]) => ({
    name, in: 'query', required: required.has(name), ...(schema.description ? { description: schema.description } : {}), schema,
  }));
  const headers = [
    ...(op.ifMatch ? [{ name: 'If-Match', in: 'header', required: true, description: 'The ETag of the resource as last read', schema: { type: 'string' } }] : []),
    ...(answersNotModified(op) ? [{ name: 'If-None-Match', in: 'header', required: false, description: 'The ETag of the resource as last read: 304 while it is still current', schema: { type: 'string' } }] : []),
    ...(op.idempotent ? [{ name: 'Idempotency-Key', in: 'header', required: false, description: 'Sent again within 24 hours, the same request gets the first answer', schema: { type: 'string', maxLength: 255 } }] : []),
  ];
  return [...inPath, ...inQuery, ...headers];
}


/** The headers an answer carries (send() in index.ts): its resource's ETag, where a resource made is, the next page. */
function responseHeaders(status: string, { etag, body }: Response): Json | undefined {
  const headers = {
    ...(etag ? { ETag: header('The version of the resource (strong): send it as If-Match to change it', true) } : {}),
    ...(status === '201' ? { Location: header('The path of the resource made', true) } : {}),
    ...(body && isPageWire(body) ? { Link: header('<…>; rel="next": the next page, while there is more', false) } : {}),
  };
  return Object.keys(headers).length > 0 ? headers : undefined;
}

function responseObject(status: string, response: Response): Json {
  const headers = responseHeaders(status, response);
  return {
    description: response.description,
    ...(headers ? { headers } : {}),
    ...(response.body ? { content: { 'application/json': { schema: answerSchema(response.body) } } } : {}),
  };
}

function operationObject(op: Operation): Json {
  const own = Object.fromEntries(Object.entries(op.responses).map(([status, response]) => [status, responseObject(status, response)]));
  return {
    operationId: op.operationId,
    summary: op.summary,
    tags: [op.path.split('/')[1]],
    // Any one of the scopes will do.
    security: scopesAllowing(op.method, op.area ?? 'admin').map((scope) => ({ oauth2: [scope] })),
    parameters: parameters(op),
    ...(op.body ? { requestBody: { required: !op.body.optional, content: { [op.body.mediaType]: { schema: jsonSchema(op.body.schema) } } } } : {}),
    responses: { ...own, ...(answersNotModified(op) ? { 304: responseObject('304', NOT_MODIFIED) } : {}), ...errorResponses(op) },
  };
}

export function openApiDocument(operations: readonly Operation[], where: { serverUrl: string; tokenUrl: string }): Json {
  const paths: Record<string, Json> = {};
  for (const op of operations) paths[op.path] = { ...paths[op.path], [op.method.toLowerCase()]: operationObject(op) };
  paths['/openapi.json'] = {
    get: {
      operationId: 'openApiDocument', summary: 'This document', tags: ['openapi.json'], security: [],
      responses: { 200: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object', description: 'An OpenAPI 3.1 document' } } } } },
    },
  };
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
      schemas: componentSchemas(),
    },
  };
}
