/** `idp clients add | list | show ID | disable ID | enable ID | remove ID | rotate-secret ID`. */
import type { ClientRecord, DurableStore } from '../store/types.ts';
import { hashClientSecret, randomToken } from '../tokens/opaque.ts';
import { parseCommand, subcommand } from './args.ts';
import { auditChange } from './audit.ts';
import { CLIENT_TABLE_HEADERS, clientDocument, clientFieldLines, clientRow } from './client-view.ts';
import { addClient } from './clients-add.ts';
import { RefusedError, type CliContext, type ExitCode } from './context.ts';
import { formatTable, report } from './output.ts';

type ClientCommand = (id: string, durable: DurableStore, context: CliContext) => Promise<void>;

async function existingClient(durable: DurableStore, id: string): Promise<ClientRecord> {
  const client = await durable.clients.get(id);
  if (!client) throw new RefusedError(`no client with id ${id}`);
  return client;
}

const showClient: ClientCommand = async (id, durable, context) => {
  const client = await existingClient(durable, id);
  report(context, clientDocument(client), () => clientFieldLines(client));
};

function setEnabled(enabled: boolean): ClientCommand {
  return async (id, durable, context) => {
    if (!(await durable.clients.update(id, { enabled }))) throw new RefusedError(`no client with id ${id}`);
    auditChange(context, { action: 'update', resource: 'client', resource_id: id, fields: ['enabled'] });
    report(context, { client_id: id, enabled }, () => [`client ${id} ${enabled ? 'enabled' : 'disabled'}`]);
  };
}

const removeClient: ClientCommand = async (id, durable, context) => {
  if (!(await durable.clients.remove(id))) throw new RefusedError(`no client with id ${id}`);
  auditChange(context, { action: 'delete', resource: 'client', resource_id: id, fields: [] });
  report(context, { client_id: id, removed: true }, () => [`client ${id} removed`]);
};

/** A new generated secret replaces the old one at once; the old one stops working. */
const rotateSecret: ClientCommand = async (id, durable, context) => {
  const client = await existingClient(durable, id);
  if (client.secretHash === null) throw new RefusedError(`client ${id} is a public client: it has no secret to rotate`);
  const secret = randomToken();
  // The expiry belonged to the old secret; the new one does not expire until an administrator says so.
  await durable.clients.update(id, { secretHash: hashClientSecret(secret), secretExpiresAt: null });
  auditChange(context, { action: 'update', resource: 'client', resource_id: id, fields: ['client_secret', 'secret_expires_at'] });
  report(context, { client_id: id, client_secret: secret, secret_expires_at: null }, () => [
    `client ${id} has a new secret (the previous one no longer works; this one does not expire), shown only this once:`,
    secret,
  ]);
};

const BY_ID: Record<string, ClientCommand> = {
  show: showClient,
  disable: setEnabled(false),
  enable: setEnabled(true),
  remove: removeClient,
  'rotate-secret': rotateSecret,
};

async function listClients(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp clients list', options: {}, positionals: [] }, args);
  const clients = await (await context.openDurable()).clients.list();
  report(context, { clients: clients.map(clientDocument) }, () =>
    formatTable(CLIENT_TABLE_HEADERS, clients.map(clientRow), 'no clients'),
  );
}

export async function runClients(args: string[], context: CliContext): Promise<ExitCode> {
  const { name, rest } = subcommand('clients', ['add', 'list', ...Object.keys(BY_ID)], args);
  if (name === 'add') return addClient(rest, context);
  if (name === 'list') {
    await listClients(rest, context);
    return 0;
  }
  const command = BY_ID[name] as ClientCommand;
  const { positionals } = parseCommand({ usage: `idp clients ${name} ID`, options: {}, positionals: ['ID'] }, rest);
  const [id] = positionals as [string];
  await command(id, await context.openDurable(), context);
  return 0;
}
