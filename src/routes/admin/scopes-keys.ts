/** `/api-scopes` (list, create, read, remove) and `/keys` (list, rotate, retire): never a private key member. */
import { z } from 'zod';
import { apiScopeDocument, keyDocument } from '../../admin/documents.ts';
import { listKeys, retireKey, rotateKey } from '../../admin/keys.ts';
import { pageOfList } from '../../admin/keyset.ts';
import { addApiScope, apiScopesPage, getApiScope, removeApiScope } from '../../admin/scopes.ts';
import { apiScopeName } from '../../admin/input-schemas.ts';
import { apiScopePageWire, apiScopeWire, keyPageWire, retiredKeyWire, rotatedKeyWire } from '../../admin/answer-schemas.ts';
import { operation, type Operation } from './operation.ts';
import { listOperation } from './keyset.ts';

const newScope = z.strictObject({ name: apiScopeName.describe('An RFC 6749 scope token, such as orders.read') });
const retirement = z.strictObject({
  force: z.boolean().optional().describe('Retire even while tokens the key signed may be valid: they stop verifying at once.'),
});

export const SCOPE_OPERATIONS: Operation[] = [
  listOperation({
    path: '/api-scopes', operationId: 'listApiScopes', summary: 'List API scopes, by name',
    read: (deps, request) => apiScopesPage(deps.durable, request), count: async (deps) => (await deps.durable.apiScopes.list()).length,
    document: apiScopeDocument, page: apiScopePageWire,
  }),
  operation<z.output<typeof newScope>>({
    method: 'POST', path: '/api-scopes', operationId: 'createApiScope', summary: 'Add an API scope', idempotent: true,
    body: { schema: newScope, mediaType: 'application/json' },
    responses: { 201: { description: 'The API scope', body: apiScopeWire, etag: true } },
    handle: async ({ deps, body, actor }) => {
      const scope = await addApiScope(deps, body.name, actor);
      return { status: 201, body: apiScopeDocument(scope), version: scope.version, location: `/api-scopes/${encodeURIComponent(scope.name)}` };
    },
  }),
  operation({
    method: 'GET', path: '/api-scopes/{name}', operationId: 'getApiScope', summary: 'One API scope', responses: { 200: { description: 'The API scope', body: apiScopeWire, etag: true } },
    handle: async ({ deps, params }) => {
      const scope = await getApiScope(deps.durable, params.name ?? '');
      return { status: 200, body: apiScopeDocument(scope), version: scope.version };
    },
  }),
  operation({
    method: 'DELETE', path: '/api-scopes/{name}', operationId: 'deleteApiScope', summary: 'Remove an API scope (no longer granted, at once)', ifMatch: true,
    responses: { 204: { description: 'Removed' } },
    handle: async ({ deps, params, ifVersion, actor }) => {
      await removeApiScope(deps, params.name ?? '', actor, ifVersion);
      return { status: 204 };
    },
  }),
];

export const KEY_OPERATIONS: Operation[] = [
  listOperation({
    path: '/keys', operationId: 'listKeys', summary: 'List signing keys, by kid (public members only)',
    read: async (deps, request) => pageOfList(await listKeys(deps.keys), (key) => key.kid, request),
    count: async (deps) => (await listKeys(deps.keys)).length, document: keyDocument, page: keyPageWire,
  }),
  operation({
    method: 'POST', path: '/keys/rotate', operationId: 'rotateKey', summary: 'Make a new signing key the signer at once (the former one stays published as previous)',
    responses: { 200: { description: 'The new current key', body: rotatedKeyWire } },
    handle: async (call) => {
      const { key, jwksMaxAgeSeconds } = await rotateKey(call.deps.keys, { recorder: call.actor, clock: call.deps.clock, actor: 'api' });
      return { status: 200, body: { ...keyDocument(key), jwks_max_age: jwksMaxAgeSeconds } };
    },
  }),
  operation<z.output<typeof retirement> | undefined>({
    method: 'POST', path: '/keys/{kid}/retire', operationId: 'retireKey', summary: 'Stop publishing a signing key',
    body: { schema: retirement, mediaType: 'application/json', optional: true },
    responses: { 200: { description: 'The key, retired', body: retiredKeyWire } },
    handle: async (call) => {
      const { deps, params, body } = call;
      const { kid, invalidated } = await retireKey(deps.keys, params.kid ?? '', { force: body?.force === true, clients: await deps.durable.clients.list() }, { recorder: call.actor, clock: deps.clock, actor: 'api' });
      const key = (await listKeys(deps.keys)).find((k) => k.kid === kid);
      return { status: 200, body: { ...(key ? keyDocument(key) : { kid, state: 'retired' }), invalidated_tokens_valid_until: invalidated?.verifiesUntil.toISOString() ?? null } };
    },
  }),
];
