/** `idp secrets reseal`: seals again under IDP_SECRET what only IDP_SECRET_PREVIOUS opens (src/admin/secrets.ts). */
import { resealSecrets } from '../admin/secrets.ts';
import { parseCommand, subcommand } from './args.ts';
import { changeDeps, cliActor } from './audit.ts';
import { masterSecrets, type CliContext, type ExitCode } from './context.ts';
import { openKeyManager } from './keys.ts';
import { report } from './output.ts';

async function reseal(args: string[], context: CliContext): Promise<ExitCode> {
  parseCommand({ usage: 'idp secrets reseal', options: {}, positionals: [] }, args);
  const secrets = masterSecrets(context);
  const done = await resealSecrets({ ...(await changeDeps(context)), keys: await openKeyManager(context), secrets }, cliActor(context));
  const result = { signing_keys: done.signingKeys, totp_secrets: done.totpSecrets, webhook_secrets: done.webhookSecrets, check_value: done.checkValue };
  report(context, result, () => [
    `resealed under IDP_SECRET: ${done.signingKeys} signing key(s), ${done.totpSecrets} TOTP secret(s), ${done.webhookSecrets} webhook secret(s)${done.checkValue ? ', the check value' : ''}`,
    secrets.previous.length > 0
      ? 'nothing in the database needs IDP_SECRET_PREVIOUS any more. If the old secret leaked, remove it now: '
        + 'the refresh tokens it signed are then refused and their users sign in again. Otherwise those not used since '
        + 'the change still need it until IDP_REFRESH_TOKEN_IDLE_LIFETIME has passed: remove it then'
      : 'nothing in the database needs a previous secret',
  ]);
  return 0;
}

export async function runSecrets(args: string[], context: CliContext): Promise<ExitCode> {
  const { rest } = subcommand('secrets', ['reseal'], args);
  return reseal(rest, context);
}
