/** `idp clients add | list | update ID | show ID | disable ID | enable ID | remove ID | rotate-secret ID`. */
import { getClient, listClients, removeClient, setClientEnabled } from '../admin/clients.ts';
import { rotateClientSecret } from '../admin/secrets.ts';
import type { DurableStore } from '../store/types.ts';
import { parseCommand, subcommand } from './args.ts';
import { auditChange } from './audit.ts';
import { CLIENT_TABLE_HEADERS, clientDocument, clientFieldLines, clientRow } from './client-view.ts';
import { addClient } from './clients-add.ts';
import { updateClientCommand } from './clients-update.ts';
import type { CliContext, ExitCode } from './context.ts';
import { formatTable, report } from './output.ts';

type ClientCommand = (id: string, durable: DurableStore, context: CliContext) => Promise<void>;

const showClient: ClientCommand = async (id, durable, context) => {
  const client = await getClient(durable, id);
  report(context, clientDocument(client), () => clientFieldLines(client));
};

function setEnabled(enabled: boolean): ClientCommand {
  return async (id, durable, context) => {
    await setClientEnabled(durable, id, enabled);
    auditChange(context, { action: 'update', resource: 'client', resource_id: id, fields: ['enabled'] });
    report(context, { client_id: id, enabled }, () => [`client ${id} ${enabled ? 'enabled' : 'disabled'}`]);
  };
}

const removeCommand: ClientCommand = async (id, durable, context) => {
  await removeClient(durable, id);
  auditChange(context, { action: 'delete', resource: 'client', resource_id: id, fields: [] });
  report(context, { client_id: id, removed: true }, () => [`client ${id} removed`]);
};

const rotateSecret: ClientCommand = async (id, durable, context) => {
  const { secret } = await rotateClientSecret(durable, id);
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
  remove: removeCommand,
  'rotate-secret': rotateSecret,
};

async function listCommand(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp clients list', options: {}, positionals: [] }, args);
  const clients = await listClients(await context.openDurable());
  report(context, { clients: clients.map(clientDocument) }, () =>
    formatTable(CLIENT_TABLE_HEADERS, clients.map(clientRow), 'no clients'),
  );
}

export async function runClients(args: string[], context: CliContext): Promise<ExitCode> {
  const { name, rest } = subcommand('clients', ['add', 'list', 'update', ...Object.keys(BY_ID)], args);
  if (name === 'add') return addClient(rest, context);
  if (name === 'update') return updateClientCommand(rest, context);
  if (name === 'list') {
    await listCommand(rest, context);
    return 0;
  }
  const command = BY_ID[name] as ClientCommand;
  const { positionals } = parseCommand({ usage: `idp clients ${name} ID`, options: {}, positionals: ['ID'] }, rest);
  const [id] = positionals as [string];
  await command(id, await context.openDurable(), context);
  return 0;
}
