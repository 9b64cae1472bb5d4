/**
 * `idp webhooks add --url U [--event TYPE]... [--description D] | list | show ID | enable ID |
 * disable ID | remove ID | test ID | rotate-secret ID | deliveries ID | redeliver ID DELIVERY_ID`,
 * over admin/webhooks.ts. A change and its `admin_change` event are written in one transaction;
 * the event is logged here.
 */
import {
  createWebhook, getWebhook, listWebhookDeliveries, listWebhooks, redeliverWebhook, removeWebhook,
  rotateWebhookSecret, testWebhook, updateWebhook, type WebhookDeps,
} from '../admin/webhooks.ts';
import { cliActor } from './audit.ts';
import { createAddressPolicy } from '../events/addresses.ts';
import { deriveKeyring } from '../tokens/secret-box.ts';
import { parseCommand, subcommand } from './args.ts';
import { masterSecrets, UsageError, type CliContext, type ExitCode } from './context.ts';
import { formatTable, report } from './output.ts';
import { attemptRows, ATTEMPT_HEADERS, webhookLines, webhookRow, WEBHOOK_HEADERS } from './webhook-view.ts';

async function depsOf(context: CliContext): Promise<WebhookDeps> {
  const { config, clock } = context;
  return {
    durable: await context.openDurable(),
    keyring: deriveKeyring(masterSecrets(context), 'webhook-secrets'),
    policy: createAddressPolicy({ production: config.production, allowedNetworks: config.webhooks.allowedNetworks }),
    clock,
  };
}

const ADD_USAGE = 'idp webhooks add --url U [--event TYPE]... [--description D]';

async function add(args: string[], context: CliContext): Promise<void> {
  const { values } = parseCommand({
    usage: ADD_USAGE,
    options: { url: { type: 'string' }, event: { type: 'string', multiple: true }, description: { type: 'string' } },
    positionals: [],
  }, args);
  if (values.url === undefined) throw new UsageError(`missing --url (usage: ${ADD_USAGE})`);
  const { endpoint, secret } = await createWebhook(await depsOf(context), { url: values.url, event_types: values.event, description: values.description }, cliActor(context));
  report(context, { ...endpoint, secret }, () => [
    `webhook endpoint ${endpoint.id} added for ${endpoint.event_types.join(' ')}; its signing secret, shown only this once:`,
    secret,
  ]);
}

async function list(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp webhooks list', options: {}, positionals: [] }, args);
  const endpoints = await listWebhooks(await depsOf(context));
  report(context, { webhooks: endpoints }, () => formatTable(WEBHOOK_HEADERS, endpoints.map(webhookRow), 'no webhook endpoints'));
}

type ById = (id: string, deps: WebhookDeps, context: CliContext) => Promise<void>;

const BY_ID: Record<string, ById> = {
  show: async (id, deps, context) => {
    const endpoint = await getWebhook(deps, id);
    report(context, endpoint, () => webhookLines(endpoint));
  },
  enable: (id, deps, context) => setEnabled(id, deps, context, true),
  disable: (id, deps, context) => setEnabled(id, deps, context, false),
  remove: async (id, deps, context) => {
    await removeWebhook(deps, id, cliActor(context));
    report(context, { id, removed: true }, () => [`webhook endpoint ${id} removed`]);
  },
  test: async (id, deps, context) => {
    const { eventId } = await testWebhook(deps, id);
    report(context, { id, event_id: eventId }, () => [`webhook.test event ${eventId} queued for ${id} (idp webhooks deliveries ${id} shows how it went)`]);
  },
  'rotate-secret': async (id, deps, context) => {
    const { secret, previousValidUntil } = await rotateWebhookSecret(deps, id, cliActor(context));
    const until = previousValidUntil.toISOString();
    report(context, { id, secret, previous_secret_expires_at: until }, () => [
      `webhook endpoint ${id} has a new secret (the previous one signs beside it until ${until}), shown only this once:`,
      secret,
    ]);
  },
  deliveries: async (id, deps, context) => {
    const attempts = (await listWebhookDeliveries(deps, id)).items;
    report(context, { id, attempts }, () => formatTable(ATTEMPT_HEADERS, attemptRows(attempts), 'no delivery attempts'));
  },
};

async function setEnabled(id: string, deps: WebhookDeps, context: CliContext, enabled: boolean): Promise<void> {
  const { endpoint } = await updateWebhook(deps, id, { enabled }, cliActor(context));
  report(context, endpoint, () => [`webhook endpoint ${id} ${enabled ? 'enabled' : 'disabled'}`]);
}

async function redeliver(args: string[], context: CliContext): Promise<void> {
  const { positionals } = parseCommand({ usage: 'idp webhooks redeliver ID DELIVERY_ID', options: {}, positionals: ['ID', 'DELIVERY_ID'] }, args);
  const [id, deliveryId] = positionals as [string, string];
  await redeliverWebhook(await depsOf(context), id, deliveryId);
  report(context, { id, delivery_id: deliveryId, redelivering: true }, () => [`delivery ${deliveryId} of ${id} is due again`]);
}

const COMMANDS = ['add', 'list', ...Object.keys(BY_ID), 'redeliver'];

export async function runWebhooks(args: string[], context: CliContext): Promise<ExitCode> {
  const { name, rest } = subcommand('webhooks', COMMANDS, args);
  if (name === 'add') await add(rest, context);
  else if (name === 'list') await list(rest, context);
  else if (name === 'redeliver') await redeliver(rest, context);
  else {
    const { positionals } = parseCommand({ usage: `idp webhooks ${name} ID`, options: {}, positionals: ['ID'] }, rest);
    await BY_ID[name]?.(positionals[0] as string, await depsOf(context), context);
  }
  return 0;
}
