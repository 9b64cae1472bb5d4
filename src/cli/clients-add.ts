/**
 * `idp clients add`: the flags become a client for src/admin/clients.ts, which checks and
 * registers it; its generated secret is printed once. A value src/admin/ finds malformed is a
 * usage error naming the flag (flag-names.ts).
 */
import { createClient, newClientOf } from '../admin/clients.ts';
import type { NewClientFields } from '../admin/input-schemas.ts';
import { parseCommand } from './args.ts';
import { changeDeps, cliActor } from './audit.ts';
import { clientDocument } from './client-view.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { namingFlags, secondsOf } from './flag-names.ts';
import { report } from './output.ts';

const ADD_SPEC = {
  usage: 'idp clients add --id ID [options], see idp help',
  options: {
    id: { type: 'string' },
    name: { type: 'string' },
    public: { type: 'boolean' },
    grant: { type: 'string', multiple: true },
    scope: { type: 'string', multiple: true },
    'redirect-uri': { type: 'string', multiple: true },
    'post-logout-redirect-uri': { type: 'string', multiple: true },
    'cors-origin': { type: 'string', multiple: true },
    'access-token-lifetime': { type: 'string' },
    'require-consent': { type: 'boolean' },
    'secret-expires-at': { type: 'string' },
  },
  positionals: [],
} as const;

/** The flag of each field (`idp clients update` adds `add-` to the lists'). */
export const CLIENT_FLAGS = {
  client_id: 'id', display_name: 'name', grant_types: 'grant', scopes: 'scope', redirect_uris: 'redirect-uri',
  post_logout_redirect_uris: 'post-logout-redirect-uri', cors_origins: 'cors-origin',
  access_token_lifetime: 'access-token-lifetime', secret_expires_at: 'secret-expires-at',
} as const;

/** The client the flags describe, by wire names: src/admin/ checks it and fills in the defaults. */
function clientFromFlags(args: string[]): Record<string, unknown> {
  const { values } = parseCommand(ADD_SPEC, args);
  if (values.id === undefined) throw new UsageError(`missing option --id (usage: ${ADD_SPEC.usage})`);
  return {
    client_id: values.id,
    display_name: values.name,
    public: values.public,
    grant_types: values.grant,
    scopes: values.scope,
    redirect_uris: values['redirect-uri'],
    post_logout_redirect_uris: values['post-logout-redirect-uri'],
    cors_origins: values['cors-origin'],
    access_token_lifetime: secondsOf(values['access-token-lifetime']),
    require_consent: values['require-consent'],
    secret_expires_at: values['secret-expires-at'],
  };
}

export async function addClient(args: string[], context: CliContext): Promise<ExitCode> {
  const input = clientFromFlags(args);
  // The flags are checked before the database is opened: bad usage is exit 2 without one.
  const created = await namingFlags(CLIENT_FLAGS, input, async () => {
    const client = newClientOf(input as NewClientFields);
    return createClient(await changeDeps(context), client, cliActor(context));
  });
  const { clientId } = created.client.record;
  const { secret } = created;
  report(context, { ...clientDocument(created.client.record), ...(secret === undefined ? {} : { client_secret: secret }) }, () =>
    secret === undefined
      ? [`client ${clientId} created (public: it has no secret)`]
      : [`client ${clientId} created; its secret, shown only this once:`, secret],
  );
  return 0;
}
