/** `/clients`: list, create (a confidential client's generated secret once), read, change, remove, new secret. */
import { z } from 'zod';
import { updateClient } from '../../admin/client-update.ts';
import { clientsPage, createClient, getVersionedClient, removeClient } from '../../admin/clients.ts';
import { clientDocument } from '../../admin/documents.ts';
import { MAX_KEEP_OLD_SECONDS, rotateClientSecret } from '../../admin/secrets.ts';
import { CLIENT_FIELDS, clientSchema } from '../../admin/seed-schema.ts';
import { seedClientRecord } from '../../admin/seed-records.ts';
import { clientPageWire, clientWire, clientWithSecretWire, createdClientWire } from '../../admin/wire-schemas.ts';
import { operation, type Operation } from './operation.ts';
import { listOperation } from './pages.ts';

const newClient = clientSchema.omit({ client_secret: true }).extend({
  public: z.boolean().optional().describe('A public client has no secret; a confidential one (the default) gets a generated secret, in this answer only.'),
});
// RFC 7396: a member left out is kept, null clears it. The secret changes by rotation only.
const clientPatch = clientSchema.omit({ client_id: true, client_secret: true });
const rotation = z.strictObject({
  keep_old_for_seconds: z.number().int().min(0).max(MAX_KEEP_OLD_SECONDS).optional()
    .describe('Keep accepting the replaced secret this long (default 0: it stops working at once).'),
});

const path = (id: string) => `/clients/${encodeURIComponent(id)}`;

export const CLIENT_OPERATIONS: Operation[] = [
  listOperation({
    path: '/clients', operationId: 'listClients', summary: 'List clients, in client_id order',
    read: (deps, request) => clientsPage(deps.durable, request), document: clientDocument, page: clientPageWire,
  }),
  operation<z.output<typeof newClient>>({
    method: 'POST', path: '/clients', operationId: 'createClient', summary: 'Register a client', idempotent: true,
    body: { schema: newClient, mediaType: 'application/json' },
    responses: { 201: { description: 'The client (with client_secret, shown this once, for a confidential client)', body: createdClientWire, etag: true } },
    handle: async ({ deps, body, changed }) => {
      const { secretHash: _none, ...fields } = seedClientRecord({ ...body, client_secret: null });
      const { client, secret } = await createClient(deps.durable, { ...fields, public: body.public ?? false });
      changed({ action: 'create', resource: 'client', resource_id: client.clientId, fields: CLIENT_FIELDS });
      const { record, version } = await getVersionedClient(deps.durable, client.clientId);
      const document = { ...clientDocument(record), ...(secret === undefined ? {} : { client_secret: secret }) };
      return { status: 201, body: document, version, location: path(client.clientId) };
    },
  }),
  operation({
    method: 'GET', path: '/clients/{client_id}', operationId: 'getClient', summary: 'One client', responses: { 200: { description: 'The client', body: clientWire, etag: true } },
    handle: async ({ deps, params }) => {
      const { record, version } = await getVersionedClient(deps.durable, params.client_id ?? '');
      return { status: 200, body: clientDocument(record), version };
    },
  }),
  operation<z.output<typeof clientPatch>>({
    method: 'PATCH', path: '/clients/{client_id}', operationId: 'updateClient', summary: 'Change a client (JSON merge patch, RFC 7396)', ifMatch: true,
    body: { schema: clientPatch, mediaType: 'application/merge-patch+json' },
    responses: { 200: { description: 'The client as changed', body: clientWire, etag: true } },
    handle: async ({ deps, params, body, ifVersion, changed }) => {
      const id = params.client_id ?? '';
      const updated = await updateClient(deps.durable, id, body, ifVersion);
      if (updated.changed.length > 0) changed({ action: 'update', resource: 'client', resource_id: id, fields: updated.changed });
      const { record, version } = await getVersionedClient(deps.durable, id);
      return { status: 200, body: clientDocument(record), version };
    },
  }),
  operation({
    method: 'DELETE', path: '/clients/{client_id}', operationId: 'deleteClient', summary: 'Remove a client', ifMatch: true,
    responses: { 204: { description: 'Removed' } },
    handle: async ({ deps, params, ifVersion, changed }) => {
      const { clientId } = await removeClient(deps.durable, params.client_id ?? '', ifVersion);
      changed({ action: 'delete', resource: 'client', resource_id: clientId, fields: [] });
      return { status: 204 };
    },
  }),
  operation<z.output<typeof rotation> | undefined>({
    method: 'POST', path: '/clients/{client_id}/secret', operationId: 'rotateClientSecret', summary: 'Give a confidential client a new generated secret', idempotent: true,
    body: { schema: rotation, mediaType: 'application/json', optional: true },
    responses: { 200: { description: 'The client with its new client_secret, shown this once', body: clientWithSecretWire, etag: true } },
    handle: async ({ deps, params, body, changed }) => {
      const id = params.client_id ?? '';
      const rotated = await rotateClientSecret(deps.durable, id, { keepOldForSeconds: body?.keep_old_for_seconds ?? 0, now: deps.clock() });
      changed({ action: 'update', resource: 'client', resource_id: id, fields: ['client_secret'] });
      const { record, version } = await getVersionedClient(deps.durable, id);
      return { status: 200, body: { ...clientDocument(record), client_secret: rotated.secret }, version };
    },
  }),
];
