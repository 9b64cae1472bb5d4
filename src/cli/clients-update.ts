/**
 * `idp clients update ID`: the flags become a patch for src/admin/client-update.ts (what no flag
 * names is kept), checked by the rules of `idp clients add`; it prints the fields it changed.
 */
import { updateClient, type ClientPatch } from '../admin/client-update.ts';
import { getClient } from '../admin/clients.ts';
import { RULE_MESSAGES, isGrantType, isOrigin, isRedirectUri, isScopeToken } from '../admin/rules.ts';
import type { ClientRecord } from '../store/records.ts';
import { editedList, onOrOff, parseCommand } from './args.ts';
import { changeDeps, cliActor } from './audit.ts';
import { clientDocument } from './client-view.ts';
import { checkEach, parseExpiry, parseLifetime } from './clients-add.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { report } from './output.ts';

const USAGE = 'idp clients update ID [options], see idp clients update --help';

/** The list flags: `--add-X`/`--remove-X` per list, the list's field and the rule of its values. */
const LISTS = {
  'redirect-uri': ['redirect_uris', 'redirectUris', isRedirectUri, RULE_MESSAGES.redirectUri],
  'post-logout-redirect-uri': ['post_logout_redirect_uris', 'postLogoutRedirectUris', isRedirectUri, RULE_MESSAGES.redirectUri],
  'cors-origin': ['cors_origins', 'corsOrigins', isOrigin, RULE_MESSAGES.origin],
  scope: ['scopes', 'scopes', isScopeToken, RULE_MESSAGES.scopeToken],
  grant: ['grant_types', 'grantTypes', isGrantType, RULE_MESSAGES.grantType],
} as const;

type ListFlag = keyof typeof LISTS;
const LIST_FLAGS = Object.keys(LISTS) as ListFlag[];
const many = { type: 'string', multiple: true } as const;

const UPDATE_SPEC = {
  usage: USAGE,
  options: {
    name: { type: 'string' },
    'access-token-lifetime': { type: 'string' },
    'require-consent': { type: 'boolean' },
    'no-require-consent': { type: 'boolean' },
    'secret-expires-at': { type: 'string' },
    ...Object.fromEntries(LIST_FLAGS.flatMap((flag) => [[`add-${flag}`, many], [`remove-${flag}`, many]])),
  } as Record<string, { type: 'string'; multiple?: true } | { type: 'boolean' }>,
  positionals: ['ID'],
};

type Values = Record<string, string | boolean | string[] | undefined>;
type StoredLists = Pick<ClientRecord, (typeof LISTS)[ListFlag][1]>;
const NO_LISTS: StoredLists = { redirectUris: [], postLogoutRedirectUris: [], corsOrigins: [], scopes: [], grantTypes: [] };

/** The stored list with the added values appended and the removed ones taken out. */
function editedFlagList(flag: ListFlag, values: Values, stored: readonly string[]): string[] | undefined {
  const [, , rule, message] = LISTS[flag];
  const added = checkEach(`add-${flag}`, (values[`add-${flag}`] as string[] | undefined) ?? [], rule, message);
  const removed = (values[`remove-${flag}`] as string[] | undefined) ?? [];
  if (added.length === 0 && removed.length === 0) return undefined;
  return editedList(stored, added, removed);
}

/** The patch the flags describe against the stored client; a UsageError when they describe none. */
function patchFromFlags(values: Values, client: StoredLists): ClientPatch {
  const expiresAt = values['secret-expires-at'] as string | undefined;
  const patch: ClientPatch = {
    display_name: values.name as string | undefined,
    access_token_lifetime: values['access-token-lifetime'] === undefined ? undefined : parseLifetime(values['access-token-lifetime'] as string),
    require_consent: onOrOff(values, 'require-consent', USAGE),
    // `--secret-expires-at none` takes the expiry away.
    secret_expires_at: expiresAt === undefined ? undefined : expiresAt === 'none' ? null : (parseExpiry(expiresAt), expiresAt),
    ...Object.fromEntries(LIST_FLAGS.map((flag) => [LISTS[flag][0], editedFlagList(flag, values, client[LISTS[flag][1]])])),
  };
  if (Object.values(patch).every((value) => value === undefined)) throw new UsageError(`no change given (usage: ${USAGE})`);
  return patch;
}

export async function updateClientCommand(args: string[], context: CliContext): Promise<ExitCode> {
  const { values, positionals } = parseCommand(UPDATE_SPEC, args);
  const id = positionals[0] as string;
  // Flags are checked before the database is opened, so bad usage is exit 2 whatever is stored.
  patchFromFlags(values, NO_LISTS);
  const durable = await context.openDurable();
  const updated = await updateClient(await changeDeps(context, durable), id, patchFromFlags(values, await getClient(durable, id)), cliActor(context));
  report(context, { ...clientDocument(updated.client.record), changed: updated.changed }, () => [
    updated.changed.length === 0 ? `client ${id}: nothing changed` : `client ${id}: ${updated.changed.join(', ')}`,
  ]);
  return 0;
}
