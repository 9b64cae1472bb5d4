/** `idp clients add | list | update ID | show ID | disable ID | enable ID | remove ID | rotate-secret ID [--keep-old-for DURATION]`. */
import { updateClient } from '../admin/client-update.ts';
import { getClient, listClients, removeClient } from '../admin/clients.ts';
import { rotateClientSecret } from '../admin/secrets.ts';
import type { DurableStore } from '../store/types.ts';
import { parseCommand, subcommand } from './args.ts';
import { changeDeps, cliActor } from './audit.ts';
import { CLIENT_TABLE_HEADERS, clientDocument, clientFieldLines, clientRow } from './client-view.ts';
import { addClient } from './clients-add.ts';
import { updateClientCommand } from './clients-update.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { parseDuration } from './duration.ts';
import { formatTable, report } from './output.ts';

type ClientCommand = (id: string, durable: DurableStore, context: CliContext) => Promise<void>;

const showClient: ClientCommand = async (id, durable, context) => {
  const client = await getClient(durable, id);
  report(context, clientDocument(client), () => clientFieldLines(client));
};

function setEnabled(enabled: boolean): ClientCommand {
  return async (id, durable, context) => {
    await updateClient(await changeDeps(context, durable), id, { enabled }, cliActor(context));
    report(context, { client_id: id, enabled }, () => [`client ${id} ${enabled ? 'enabled' : 'disabled'}`]);
  };
}

const removeCommand: ClientCommand = async (id, durable, context) => {
  await removeClient(await changeDeps(context, durable), id, cliActor(context));
  report(context, { client_id: id, removed: true }, () => [`client ${id} removed`]);
};

const ROTATE_USAGE = 'idp clients rotate-secret ID [--keep-old-for DURATION]';

/** `--keep-old-for 1d`: the old secret keeps working that long, so the client can switch without downtime. */
async function rotateSecret(args: string[], context: CliContext): Promise<void> {
  const { positionals, values } = parseCommand({ usage: ROTATE_USAGE, options: { 'keep-old-for': { type: 'string' } }, positionals: ['ID'] }, args);
  const [id] = positionals as [string];
  const keepText = values['keep-old-for'];
  const keepOldForSeconds = keepText === undefined ? undefined : parseDuration(keepText);
  if (keepOldForSeconds === undefined && keepText !== undefined) {
    throw new UsageError(`--keep-old-for must be a duration such as 1d, 12h, 30m, 3600s or seconds, not "${keepText}" (usage: ${ROTATE_USAGE})`);
  }
  const keep = keepOldForSeconds === undefined ? undefined : { keepOldForSeconds, now: context.clock() };
  const { secret, previousValidUntil } = await rotateClientSecret(await changeDeps(context), id, cliActor(context), keep);
  const until = previousValidUntil?.toISOString() ?? null;
  report(context, { client_id: id, client_secret: secret, secret_expires_at: null, previous_secret_expires_at: until }, () => [
    `client ${id} has a new secret (${until ? `the previous one still works until ${until}` : 'the previous one no longer works'}; this one does not expire), shown only this once:`,
    secret,
  ]);
}

const BY_ID: Record<string, ClientCommand> = {
  show: showClient,
  disable: setEnabled(false),
  enable: setEnabled(true),
  remove: removeCommand,
};

async function listCommand(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp clients list', options: {}, positionals: [] }, args);
  const clients = await listClients(await context.openDurable());
  report(context, { clients: clients.map(clientDocument) }, () =>
    formatTable(CLIENT_TABLE_HEADERS, clients.map(clientRow), 'no clients'),
  );
}

export async function runClients(args: string[], context: CliContext): Promise<ExitCode> {
  const { name, rest } = subcommand('clients', ['add', 'list', 'update', ...Object.keys(BY_ID), 'rotate-secret'], args);
  if (name === 'add') return addClient(rest, context);
  if (name === 'update') return updateClientCommand(rest, context);
  if (name === 'rotate-secret') {
    await rotateSecret(rest, context);
    return 0;
  }
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
