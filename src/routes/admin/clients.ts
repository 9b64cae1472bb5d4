/** `/clients`: list, create (a confidential client's generated secret once), read, change, remove, new secret. */
import { z } from 'zod';
import { updateClient } from '../../admin/client-update.ts';
import { clientsPage, createClient, getVersionedClient, newClientOf, removeClient } from '../../admin/clients.ts';
import { clientDocument } from '../../admin/documents.ts';
import { MAX_KEEP_OLD_SECONDS, rotateClientSecret } from '../../admin/secrets.ts';
import { clientPatchSchema, newClientSchema } from '../../admin/input-schemas.ts';
import { clientPageWire, clientWire, clientWithSecretWire, createdClientWire } from '../../admin/answer-schemas.ts';
import { operation, type Operation } from './operation.ts';
import { listOperation } from './keyset.ts';

const rotation = z.strictObject({
  keep_old_for_seconds: z.number().int().min(0).max(MAX_KEEP_OLD_SECONDS).optional()
    .describe('Keep accepting the replaced secret this long (default 0: it stops working at once).'),
});

const path = (id: string) => `/clients/${encodeURIComponent(id)}`;

export const CLIENT_OPERATIONS: Operation[] = [
  listOperation({
    path: '/clients', operationId: 'listClients', summary: 'List clients, in client_id order',
    read: (deps, request) => clientsPage(deps.durable, request), count: (deps) => deps.durable.clients.count(), document: clientDocument, page: clientPageWire,
  }),
  operation<z.output<typeof newClientSchema>>({
    method: 'POST', path: '/clients', operationId: 'createClient', summary: 'Register a client', idempotent: true,
    body: { schema: newClientSchema, mediaType: 'application/json' },
    responses: { 201: { description: 'The client (with client_secret, shown this once, for a confidential client)', body: createdClientWire, etag: true } },
    handle: async ({ deps, body, actor }) => {
      const { client: { record, version }, secret } = await createClient(deps, newClientOf(body), actor);
      const document = { ...clientDocument(record), ...(secret === undefined ? {} : { client_secret: secret }) };
      return { status: 201, body: document, version, location: path(record.clientId) };
    },
  }),
  operation({
    method: 'GET', path: '/clients/{client_id}', operationId: 'getClient', summary: 'One client', responses: { 200: { description: 'The client', body: clientWire, etag: true } },
    handle: async ({ deps, params }) => {
      const { record, version } = await getVersionedClient(deps.durable, params.client_id ?? '');
      return { status: 200, body: clientDocument(record), version };
    },
  }),
  operation<z.output<typeof clientPatchSchema>>({
    method: 'PATCH', path: '/clients/{client_id}', operationId: 'updateClient', summary: 'Change a client (JSON merge patch, RFC 7396)', ifMatch: true,
    body: { schema: clientPatchSchema, mediaType: 'application/merge-patch+json' },
    responses: { 200: { description: 'The client as changed', body: clientWire, etag: true } },
    handle: async ({ deps, params, body, ifVersion, actor }) => {
      const { client: { record, version } } = await updateClient(deps, params.client_id ?? '', body, actor, ifVersion);
      return { status: 200, body: clientDocument(record), version };
    },
  }),
  operation({
    method: 'DELETE', path: '/clients/{client_id}', operationId: 'deleteClient', summary: 'Remove a client', ifMatch: true,
    responses: { 204: { description: 'Removed' } },
    handle: async ({ deps, params, ifVersion, actor }) => {
      await removeClient(deps, params.client_id ?? '', actor, ifVersion);
      return { status: 204 };
    },
  }),
  operation<z.output<typeof rotation> | undefined>({
    method: 'POST', path: '/clients/{client_id}/secret', operationId: 'rotateClientSecret', summary: 'Give a confidential client a new generated secret', idempotent: true,
    body: { schema: rotation, mediaType: 'application/json', optional: true },
    responses: { 200: { description: 'The client with its new client_secret, shown this once', body: clientWithSecretWire, etag: true } },
    handle: async ({ deps, params, body, actor }) => {
      const rotated = await rotateClientSecret(deps, params.client_id ?? '', actor, { keepOldForSeconds: body?.keep_old_for_seconds ?? 0, now: deps.clock() });
      return { status: 200, body: { ...clientDocument(rotated.client), client_secret: rotated.secret }, version: rotated.version };
    },
  }),
];
