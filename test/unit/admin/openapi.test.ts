/**
 * The administration API's OpenAPI document against the routes Fastify registers: every route is
 * documented and every documented operation exists, with the request schemas that validate it and
 * a schema for every answer; and the document is valid OpenAPI 3.1 by a validator of its own.
 * (That the real answers match those schemas, the API's tests check: test/helpers/openapi-answers.ts.)
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ADMIN_BASE, adminApiRoutes } from '../../../src/routes/admin/index.ts';
import type { AdminApiDeps } from '../../../src/routes/admin/deps.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test reads the document's members as JSON
type Json = Record<string, any>;

async function registered(): Promise<{ routes: Set<string>; document: Json }> {
  const app = Fastify();
  const routes = new Set<string>();
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.add(`${method} ${route.url}`);
  });
  // Registering touches no dependency: the routes use them when called.
  await app.register(adminApiRoutes, { prefix: ADMIN_BASE, deps: {} as AdminApiDeps, serverUrl: 'https://id.example', tokenUrl: 'https://id.example/connect/token' });
  await app.ready();
  const document = (await app.inject({ method: 'GET', url: `${ADMIN_BASE}/openapi.json` })).json() as Json;
  await app.close();
  return { routes, document };
}

describe('the OpenAPI document of the administration API', () => {
  it('documents every route, and every documented operation is a route', async () => {
    const { routes, document } = await registered();
    const documented = new Set<string>();
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations)) documented.add(`${method.toUpperCase()} ${ADMIN_BASE}${path.replace(/\{(\w+)\}/g, ':$1')}`);
    }
    expect([...routes].sort()).toEqual([...documented].sort());
    expect(routes.size).toBeGreaterThan(15);
  });

  it('is OpenAPI 3.1 with the client credentials scheme and the three scopes, and the request schemas that validate', async () => {
    const { document } = await registered();
    expect(document.openapi).toBe('3.1.0');
    const scheme = document.components.securitySchemes.oauth2;
    expect(scheme.flows.clientCredentials.tokenUrl).toBe('https://id.example/connect/token');
    expect(Object.keys(scheme.flows.clientCredentials.scopes).sort()).toEqual(['admin_api', 'admin_api_readonly', 'admin_console_webhooks']);
    const create = document.paths['/clients'].post;
    const body = create.requestBody.content['application/json'].schema;
    expect(body.additionalProperties).toBe(false);
    expect(body.required).toEqual(['client_id']);
    expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(['client_id', 'redirect_uris', 'public']));
    expect(Object.keys(body.properties)).not.toContain('client_secret');
    expect(Object.keys(document.paths['/clients/{client_id}'].patch.requestBody.content)).toEqual(['application/merge-patch+json']);
    expect(document.paths['/clients/{client_id}'].patch.parameters).toContainEqual(expect.objectContaining({ name: 'If-Match', in: 'header', required: true }));
    expect(document.paths['/users'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['limit', 'cursor', 'count', 'username', 'email', 'q']);
    expect(document.paths['/users'].get.security).toEqual([{ oauth2: ['admin_api_readonly'] }, { oauth2: ['admin_api'] }]);
    expect(document.paths['/openapi.json'].get.security).toEqual([]);
  });

  it('is valid OpenAPI 3.1, by the OpenAPI Initiative\'s schema of it', async () => {
    const { document } = await registered();
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // The validator does refuse what is not OpenAPI: an answer without its description.
    const broken = structuredClone(document);
    delete broken.paths['/users/{id}'].get.responses['200'].description;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('describes every answer: a success by its schema (204 aside), every refusal as a Problem', async () => {
    const { document } = await registered();
    const schemas = document.components.schemas as Json;
    let described = 0;
    for (const [path, operations] of Object.entries(document.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(operations)) {
        for (const [status, answer] of Object.entries(op.responses as Json)) {
          const where = `${method} ${path} ${status}`;
          if (status === '204' || status === '304') {
            expect(answer.content, where).toBeUndefined();
            continue;
          }
          const [mediaType, ...others] = Object.keys(answer.content ?? {});
          expect(others, where).toEqual([]);
          expect(mediaType, where).toBe(/^2/.test(status) ? 'application/json' : 'application/problem+json');
          const schema = answer.content[mediaType as string].schema as Json;
          if (schema.$ref) expect(schemas[String(schema.$ref).replace('#/components/schemas/', '')], `${where} ${schema.$ref}`).toBeDefined();
          else expect(schema.type, where).toBe('object');
          described++;
        }
      }
    }
    expect(described).toBeGreaterThan(150);
    // Answers are closed objects (a member the code adds undescribed is a mismatch), and never hold a secret's hash.
    expect(schemas.Client.additionalProperties).toBe(false);
    expect(Object.keys(schemas.Client.properties)).not.toContain('secret_hash');
    expect(schemas.SigningKey.properties.public_jwk.additionalProperties).toBe(false);
    expect(Object.keys(schemas.SigningKey.properties.public_jwk.properties)).not.toContain('d');
    expect(schemas.UserPage.properties.items.items).toEqual({ $ref: '#/components/schemas/User' });
    expect(schemas.User.properties.created_at).toEqual({ type: 'string', format: 'date-time' });
    expect(schemas.Problem.required).toEqual(['type', 'title', 'status', 'detail']);
    // And the headers a client reads: where a resource made is, its version, the next page.
    expect(Object.keys(document.paths['/clients'].post.responses['201'].headers).sort()).toEqual(['ETag', 'Location']);
    expect(Object.keys(document.paths['/users'].get.responses['200'].headers)).toEqual(['Link']);
    expect(document.paths['/keys/rotate'].post.responses['200'].headers).toBeUndefined();
  });

  it('names a user in the path by {id}, their sub, as the contract of the API does', async () => {
    const { document } = await registered();
    const users = Object.keys(document.paths).filter((path) => path.startsWith('/users/'));
    expect(users.sort()).toEqual(['/users/{id}', '/users/{id}/password', '/users/{id}/sessions', '/users/{id}/sessions/{session_id}']);
    expect(document.paths['/users/{id}'].get.parameters).toEqual([
      { name: 'id', in: 'path', required: true, description: "The user's sub", schema: { type: 'string' } },
      { name: 'If-None-Match', in: 'header', required: false, description: 'The ETag of the resource as last read: 304 while it is still current', schema: { type: 'string' } },
    ]);
  });
});
