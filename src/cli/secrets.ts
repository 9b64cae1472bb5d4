/**
 * `idp secrets reseal`: seals again under IDP_SECRET everything in the database that only one
 * of IDP_SECRET_PREVIOUS opens (signing keys, TOTP secrets, the secret's check value), so the
 * previous secrets can be dropped. What lives in the ephemeral store (sessions, sign-ins in
 * progress) is not touched: it expires by itself.
 */
import { staleUserSecrets } from '../sessions/mfa.ts';
import { createKeyManager } from '../tokens/keys.ts';
import { deriveKeyring } from '../tokens/secret-box.ts';
import { resealSecretCheck } from '../tokens/secret-check.ts';
import { parseCommand, subcommand } from './args.ts';
import { masterSecrets, type CliContext, type ExitCode } from './context.ts';
import { report } from './output.ts';

async function reseal(args: string[], context: CliContext): Promise<ExitCode> {
  parseCommand({ usage: 'idp secrets reseal', options: {}, positionals: [] }, args);
  const durable = await context.openDurable();
  const secrets = masterSecrets(context);
  const keys = createKeyManager({ keys: durable.signingKeys, kek: deriveKeyring(secrets, 'signing-keys'), clock: context.clock });
  // Everything is opened before anything is written: a value no secret opens stops it all.
  const stale = staleUserSecrets(await durable.users.list(), deriveKeyring(secrets, 'totp-secrets'));
  const signingKeys = await keys.reseal();
  for (const { factorId, secretSealed } of stale) await durable.factors.reseal(factorId, secretSealed);
  const checkValue = await resealSecretCheck(durable, secrets);
  const result = { signing_keys: signingKeys, totp_secrets: stale.length, check_value: checkValue };
  report(context, result, () => [
    `resealed under IDP_SECRET: ${signingKeys} signing key(s), ${stale.length} TOTP secret(s)${checkValue ? ', the check value' : ''}`,
    secrets.previous.length > 0
      ? 'nothing in the database needs IDP_SECRET_PREVIOUS any more; refresh tokens not used since the change still do, '
        + 'until IDP_REFRESH_TOKEN_IDLE_LIFETIME has passed: remove it then (or now, and those clients sign in again)'
      : 'nothing in the database needs a previous secret',
  ]);
  return 0;
}

export async function runSecrets(args: string[], context: CliContext): Promise<ExitCode> {
  const { rest } = subcommand('secrets', ['reseal'], args);
  return reseal(rest, context);
}
