/**
 * `idp keys list | rotate | retire KID`: the signing keys. Rotation adds a key and makes it the
 * signer at once; the former signer stays published (`previous`) until it is retired, so tokens it
 * signed still verify.
 */
import type { SigningKeyRecord } from '../store/types.ts';
import { createKeyManager, type KeyManager } from '../tokens/keys.ts';
import { deriveKeyring } from '../tokens/secret-box.ts';
import { parseCommand, subcommand } from './args.ts';
import { masterSecrets, RefusedError, type CliContext, type ExitCode } from './context.ts';
import { formatTable, report, timeText } from './output.ts';

async function openKeyManager(context: CliContext): Promise<KeyManager> {
  const durable = await context.openDurable();
  return createKeyManager({ keys: durable.signingKeys, kek: deriveKeyring(masterSecrets(context), 'signing-keys'), clock: context.clock });
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

async function listKeys(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp keys list', options: {}, positionals: [] }, args);
  const keys = await (await openKeyManager(context)).list();
  report(context, { keys: keys.map(keyDocument) }, () =>
    formatTable(
      ['KID', 'STATE', 'CREATED', 'ACTIVATED'],
      keys.map((k) => [k.kid, k.state, timeText(k.createdAt), timeText(k.activatedAt)]),
      'no signing keys',
    ),
  );
}

async function rotateKey(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp keys rotate', options: {}, positionals: [] }, args);
  const key = await (await openKeyManager(context)).rotate();
  context.audit({ type: 'key_rotated', kid: key.kid, actor: 'cli' });
  report(context, keyDocument(key), () => [`new current signing key: ${key.kid}`]);
}

async function retireKey(args: string[], context: CliContext): Promise<void> {
  const { positionals } = parseCommand({ usage: 'idp keys retire KID', options: {}, positionals: ['KID'] }, args);
  const kid = positionals[0] as string;
  const result = await (await openKeyManager(context)).retire(kid);
  if (result === 'not_found') throw new RefusedError(`no signing key with kid ${kid}`);
  if (result === 'is_current') throw new RefusedError(`signing key ${kid} is the current signer: rotate first (idp keys rotate), then retire it`);
  if (result === 'already_retired') throw new RefusedError(`signing key ${kid} is already retired`);
  context.audit({ type: 'key_retired', kid, actor: 'cli' });
  report(context, { kid, state: 'retired' }, () => [`signing key ${kid} retired: it is no longer published`]);
}

const KEY_COMMANDS: Record<string, (args: string[], context: CliContext) => Promise<void>> = {
  list: listKeys,
  rotate: rotateKey,
  retire: retireKey,
};

export async function runKeys(args: string[], context: CliContext): Promise<ExitCode> {
  const { name, rest } = subcommand('keys', Object.keys(KEY_COMMANDS), args);
  await KEY_COMMANDS[name]?.(rest, context);
  return 0;
}
