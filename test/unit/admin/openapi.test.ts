/**
 * The administration API's OpenAPI document against the routes Fastify registers: every route is
 * documented and every documented operation exists, with the request schemas that validate it.
 */
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
    expect(document.paths['/users'].get.parameters.map((p: { name: string }) => p.name)).toEqual(['limit', 'cursor', 'username']);
    expect(document.paths['/users'].get.security).toEqual([{ oauth2: ['admin_api_readonly'] }, { oauth2: ['admin_api'] }]);
    expect(document.paths['/openapi.json'].get.security).toEqual([]);
  });
});
