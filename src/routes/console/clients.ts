/**
 * `/admin/clients`: the list (searchable by id or name), "Create client", and a client's page:
 * "Save", "Disable"/"Enable", "Rotate secret", "Remove". Each calls the operation the API's
 * /clients calls (src/admin/clients.ts, client-update.ts, secrets.ts), with the form's version
 * where it saves over what the page showed.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { updateClient } from '../../admin/client-update.ts';
import { createClient, getVersionedClient, listClients, newClientOf, removeClient } from '../../admin/clients.ts';
import { clientDocument } from '../../admin/documents.ts';
import { AdminError } from '../../admin/errors.ts';
import { rotateClientSecret } from '../../admin/secrets.ts';
import type { NewClientFields } from '../../admin/seed-schema.ts';
import { mayChange } from '../../console/access.ts';
import type { ConsoleAdmin } from '../../console/session.ts';
import { clientBodyOf, clientFormValues, NEW_CLIENT_VALUES, typedValues } from './client-forms.ts';
import type { ConsoleDeps } from './deps.ts';
import { actorOf, formOf, numberOf, refusalOf, textOf, versionOf, type Refusal } from './forms.ts';
import { consolePage } from './guard.ts';
import { renderConsole } from './render.ts';

type ClientRequest = FastifyRequest<{ Params: { client_id: string } }>;

/** What a client's page shows besides the client: a one-time secret, a refusal, what was typed. */
interface ClientPageExtra {
  secret?: string;
  rotated?: boolean;
  previousValidUntil?: string | undefined;
  refusal?: Refusal;
  values?: Record<string, unknown>;
  notice?: string;
}

export function clientRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const base = `${deps.page.basePath}/admin`;
  const pageOf = (id: string) => `${base}/clients/${encodeURIComponent(id)}`;

  /** A client's page as stored now; a refusal's status (400, or 409 for a stale save). */
  async function showClient(reply: FastifyReply, admin: ConsoleAdmin, id: string, extra: ClientPageExtra = {}, status = 200): Promise<FastifyReply> {
    const { record, version } = await getVersionedClient(deps.admin.durable, id);
    const client = clientDocument(record);
    return renderConsole(reply, deps, admin, 'console/client', {
      title: `Client ${client.client_id}`, area: 'clients', client, version, mayChange: mayChange(admin.roles, 'clients'),
      ...extra, values: extra.values ?? clientFormValues(client),
    }, status);
  }

  /** A change refused: the page again with the refusal (beside its fields); a stale one with the current values. */
  async function refused(reply: FastifyReply, admin: ConsoleAdmin, id: string, error: unknown, typed: Record<string, unknown> | undefined): Promise<FastifyReply> {
    const refusal = refusalOf(error);
    if (refusal.notFound) return renderConsole(reply, deps, admin, 'console/message', { title: 'No such client', area: 'clients', message: refusal.message, link: { href: `${base}/clients`, text: 'Back to the clients' } }, 404);
    return showClient(reply, admin, id, { refusal, ...(refusal.stale || !typed ? {} : { values: typed }) }, refusal.stale ? 409 : 400);
  }

  app.get('/clients', consolePage(deps, 'clients', 'read', async (request, reply, admin) => {
    const { q: asked } = request.query as { q?: unknown };
    const q = typeof asked === 'string' ? asked.trim() : '';
    const needle = q.toLowerCase();
    const clients = (await listClients(deps.admin.durable)).map(clientDocument)
      .filter((c) => needle === '' || c.client_id.toLowerCase().includes(needle) || c.display_name.toLowerCase().includes(needle));
    return renderConsole(reply, deps, admin, 'console/clients', { title: 'Clients', area: 'clients', clients, q, mayChange: mayChange(admin.roles, 'clients') });
  }));

  app.get('/clients/new', consolePage(deps, 'clients', 'change', async (_request, reply, admin) =>
    renderConsole(reply, deps, admin, 'console/client-new', { title: 'Create client', area: 'clients', values: NEW_CLIENT_VALUES })));

  app.post('/clients', consolePage(deps, 'clients', 'change', async (request, reply, admin) => {
    const form = formOf(request);
    try {
      const created = await createClient(deps.admin, newClientOf(clientBodyOf(form, true) as NewClientFields), actorOf(request, admin, deps));
      return showClient(reply.header('location', pageOf(created.client.record.clientId)), admin, created.client.record.clientId,
        created.secret === undefined ? { notice: 'Client created.' } : { secret: created.secret, notice: 'Client created.' }, 201);
    } catch (error) {
      const refusal = refusalOf(error);
      return renderConsole(reply, deps, admin, 'console/client-new', { title: 'Create client', area: 'clients', refusal, values: typedValues(form, true) }, refusal.stale ? 409 : 400);
    }
  }));

  app.get('/clients/:client_id', consolePage(deps, 'clients', 'read', async (request, reply, admin) => {
    const { client_id: id } = (request as ClientRequest).params;
    try {
      return await showClient(reply, admin, id);
    } catch (error) {
      return refused(reply, admin, id, error, undefined);
    }
  }));

  app.post('/clients/:client_id', consolePage(deps, 'clients', 'change', async (request, reply, admin) => {
    const { client_id: id } = (request as ClientRequest).params;
    const form = formOf(request);
    try {
      await updateClient(deps.admin, id, clientBodyOf(form, false), actorOf(request, admin, deps), requiredVersion(form));
      return showClient(reply, admin, id, { notice: 'Saved.' });
    } catch (error) {
      return refused(reply, admin, id, error, typedValues(form, false));
    }
  }));

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    app.post(`/clients/:client_id/${action}`, consolePage(deps, 'clients', 'change', async (request, reply, admin) => {
      const { client_id: id } = (request as ClientRequest).params;
      try {
        await updateClient(deps.admin, id, { enabled }, actorOf(request, admin, deps), requiredVersion(formOf(request)));
        return showClient(reply, admin, id, { notice: enabled ? 'Enabled.' : 'Disabled.' });
      } catch (error) {
        return refused(reply, admin, id, error, undefined);
      }
    }));
  }

  app.post('/clients/:client_id/secret', consolePage(deps, 'clients', 'change', async (request, reply, admin) => {
    const { client_id: id } = (request as ClientRequest).params;
    const keep = numberOf(formOf(request), 'keep_old_for_seconds') ?? 0;
    try {
      const rotated = await rotateClientSecret(deps.admin, id, actorOf(request, admin, deps), { keepOldForSeconds: typeof keep === 'number' ? keep : Number.NaN, now: deps.admin.clock() });
      return showClient(reply, admin, id, { secret: rotated.secret, rotated: true, previousValidUntil: rotated.previousValidUntil?.toISOString() });
    } catch (error) {
      return refused(reply, admin, id, error, undefined);
    }
  }));

  app.post('/clients/:client_id/remove', consolePage(deps, 'clients', 'change', async (request, reply, admin) => {
    const { client_id: id } = (request as ClientRequest).params;
    const form = formOf(request);
    try {
      if (textOf(form, 'confirm_client_id')?.trim() !== id) {
        throw new AdminError('invalid', `type the client id ${id} to remove it`, [{ path: ['confirm_client_id'], message: `type the client id ${id} to remove it` }]);
      }
      await removeClient(deps.admin, id, actorOf(request, admin, deps), requiredVersion(form));
      return renderConsole(reply, deps, admin, 'console/message', { title: 'Client removed', area: 'clients', message: `Client ${id} was removed.`, link: { href: `${base}/clients`, text: 'Back to the clients' } });
    } catch (error) {
      return refused(reply, admin, id, error, undefined);
    }
  }));
}

/** A change over what a page showed needs the version the page showed (a form without one is not the console's). */
function requiredVersion(form: ReturnType<typeof formOf>): number {
  const version = versionOf(form);
  if (version === undefined) throw new AdminError('invalid', 'the form carries no version of the row it shows: open the page again');
  return version;
}
