/** `idp keys list | rotate | retire KID`: the signing keys (src/admin/keys.ts says how they rotate). */
import { keyDocument } from '../admin/documents.ts';
import { listKeys, retireKey, rotateKey, type KeyChangeRecording } from '../admin/keys.ts';
import { createSigningKeyManager } from '../composition/services.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { parseCommand, subcommand } from './args.ts';
import { cliActor } from './audit.ts';
import { masterSecrets, type CliContext, type ExitCode } from './context.ts';
import { formatTable, report, timeText } from './output.ts';

export async function openKeyManager(context: CliContext): Promise<KeyManager> {
  return createSigningKeyManager(await context.openDurable(), masterSecrets(context), context.clock);
}

function cliKeyChange(context: CliContext): KeyChangeRecording {
  return { recorder: cliActor(context), clock: context.clock, actor: 'cli' };
}

async function listCommand(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp keys list', options: {}, positionals: [] }, args);
  const keys = await listKeys(await openKeyManager(context));
  report(context, { keys: keys.map(keyDocument) }, () =>
    formatTable(
      ['KID', 'STATE', 'CREATED', 'ACTIVATED'],
      keys.map((k) => [k.kid, k.state, timeText(k.createdAt), timeText(k.activatedAt)]),
      'no signing keys',
    ),
  );
}

async function rotateCommand(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp keys rotate', options: {}, positionals: [] }, args);
  const { key, jwksMaxAgeSeconds } = await rotateKey(await openKeyManager(context), cliKeyChange(context));
  report(context, { ...keyDocument(key), jwks_max_age: jwksMaxAgeSeconds }, () => [
    `new current signing key: ${key.kid}`,
    `it signs from now on, but relying parties may hold the previous key set for up to ${jwksMaxAgeSeconds} s (the JWKS Cache-Control max-age): ` +
      'those that do not refetch it on an unknown kid reject its tokens until then; the automatic rotation (IDP_KEY_ROTATION_INTERVAL) publishes a key ahead instead',
  ]);
}

async function retireCommand(args: string[], context: CliContext): Promise<void> {
  const { positionals, values } = parseCommand({ usage: 'idp keys retire KID [--force]', options: { force: { type: 'boolean' } }, positionals: ['KID'] }, args);
  const durable = await context.openDurable();
  const { kid, invalidated } = await retireKey(await openKeyManager(context), positionals[0] as string, {
    force: values.force === true,
    clients: await durable.clients.list(),
  }, cliKeyChange(context));
  const until = invalidated?.verifiesUntil.toISOString() ?? null;
  report(context, { kid, state: 'retired', invalidated_tokens_valid_until: until }, () => [
    invalidated
      ? `signing key ${kid} retired by force: every token it signed (until ${invalidated.signedUntil.toISOString()}) is invalid now instead of at ${until}; relying parties must sign their users in again`
      : `signing key ${kid} retired: it is no longer published`,
  ]);
}

const KEY_COMMANDS: Record<string, (args: string[], context: CliContext) => Promise<void>> = {
  list: listCommand,
  rotate: rotateCommand,
  retire: retireCommand,
};

export async function runKeys(args: string[], context: CliContext): Promise<ExitCode> {
  const { name, rest } = subcommand('keys', Object.keys(KEY_COMMANDS), args);
  await KEY_COMMANDS[name]?.(rest, context);
  return 0;
}
