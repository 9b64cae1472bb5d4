/**
 * `idp clients update ID`: the flags become a patch for src/admin/client-update.ts (what no flag
 * names is kept), which checks it; it prints the fields it changed.
 */
import { updateClient, type ClientPatch } from '../admin/client-update.ts';
import { getClient } from '../admin/clients.ts';
import type { ClientRecord } from '../store/records.ts';
import { editedList, onOrOff, parseCommand } from './args.ts';
import { changeDeps, cliActor } from './audit.ts';
import { clientDocument } from './client-view.ts';
import { CLIENT_FLAGS } from './clients-add.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { namingFlags, secondsOf, type FlagNames } from './flag-names.ts';
import { report } from './output.ts';

const USAGE = 'idp clients update ID [options], see idp clients update --help';

/** The list flags: `--add-X`/`--remove-X` per list, and the list's field. */
const LISTS = {
  'redirect-uri': ['redirect_uris', 'redirectUris'],
  'post-logout-redirect-uri': ['post_logout_redirect_uris', 'postLogoutRedirectUris'],
  'cors-origin': ['cors_origins', 'corsOrigins'],
  scope: ['scopes', 'scopes'],
  grant: ['grant_types', 'grantTypes'],
} as const;

/** A malformed value of a list can only be one added: it is named by its `--add-` flag. */
const UPDATE_FLAGS: FlagNames = {
  ...CLIENT_FLAGS,
  ...Object.fromEntries(Object.entries(LISTS).map(([flag, [field]]) => [field, `add-${flag}`])),
};

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
  const added = (values[`add-${flag}`] as string[] | undefined) ?? [];
  const removed = (values[`remove-${flag}`] as string[] | undefined) ?? [];
  if (added.length === 0 && removed.length === 0) return undefined;
  return editedList(stored, added, removed);
}

/** The patch the flags describe against the stored client; a UsageError when they describe none. */
function patchFromFlags(values: Values, client: StoredLists): ClientPatch {
  const expiresAt = values['secret-expires-at'] as string | undefined;
  const patch: ClientPatch = {
    display_name: values.name as string | undefined,
    access_token_lifetime: secondsOf(values['access-token-lifetime'] as string | undefined) as number | undefined,
    require_consent: onOrOff(values, 'require-consent', USAGE),
    // `--secret-expires-at none` takes the expiry away.
    secret_expires_at: expiresAt === 'none' ? null : expiresAt,
    ...Object.fromEntries(LIST_FLAGS.map((flag) => [LISTS[flag][0], editedFlagList(flag, values, client[LISTS[flag][1]])])),
  };
  if (Object.values(patch).every((value) => value === undefined)) throw new UsageError(`no change given (usage: ${USAGE})`);
  return patch;
}

export async function updateClientCommand(args: string[], context: CliContext): Promise<ExitCode> {
  const { values, positionals } = parseCommand(UPDATE_SPEC, args);
  const id = positionals[0] as string;
  // A command without a change is bad usage (exit 2) whatever is stored.
  patchFromFlags(values, NO_LISTS);
  const durable = await context.openDurable();
  const patch = patchFromFlags(values, await getClient(durable, id));
  const updated = await namingFlags(UPDATE_FLAGS, patch, async () => updateClient(await changeDeps(context, durable), id, patch, cliActor(context)));
  report(context, { ...clientDocument(updated.client.record), changed: updated.changed }, () => [
    updated.changed.length === 0 ? `client ${id}: nothing changed` : `client ${id}: ${updated.changed.join(', ')}`,
  ]);
  return 0;
}
