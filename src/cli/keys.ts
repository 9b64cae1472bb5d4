/** `idp keys list | rotate | retire KID`: the signing keys (src/admin/keys.ts says how they rotate). */
import { listKeys, retireKey, rotateKey } from '../admin/keys.ts';
import { createSigningKeyManager } from '../services.ts';
import type { SigningKeyRecord } from '../store/types.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { parseCommand, subcommand } from './args.ts';
import { masterSecrets, type CliContext, type ExitCode } from './context.ts';
import { formatTable, report, timeText } from './output.ts';

export async function openKeyManager(context: CliContext): Promise<KeyManager> {
  return createSigningKeyManager(await context.openDurable(), masterSecrets(context), context.clock);
}

function keyDocument(key: SigningKeyRecord): Record<string, unknown> {
  return {
    kid: key.kid,
    alg: key.alg,
    state: key.state,
    created_at: key.createdAt.toISOString(),
    activated_at: key.activatedAt?.toISOString() ?? null,
    retired_at: key.retiredAt?.toISOString() ?? null,
  };
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
  const { key } = await rotateKey(await openKeyManager(context));
  context.audit({ type: 'key_rotated', kid: key.kid, actor: 'cli' });
  report(context, keyDocument(key), () => [`new current signing key: ${key.kid}`]);
}

async function retireCommand(args: string[], context: CliContext): Promise<void> {
  const { positionals } = parseCommand({ usage: 'idp keys retire KID', options: {}, positionals: ['KID'] }, args);
  const { kid } = await retireKey(await openKeyManager(context), positionals[0] as string);
  context.audit({ type: 'key_retired', kid, actor: 'cli' });
  report(context, { kid, state: 'retired' }, () => [`signing key ${kid} retired: it is no longer published`]);
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
