/**
 * What `idp --help`, `idp COMMAND --help` and `idp COMMAND SUBCOMMAND --help` print: the whole
 * command list, or the usage of one command with a sentence on what it does. Nothing here opens
 * a database or reads the configuration, so help answers even where neither is set up.
 */

export const USAGE = [
  'usage: idp COMMAND [--json]',
  '',
  '  serve                                  start the service',
  '  migrate                                apply database migrations',
  '  seed FILE.json                         upsert the API scopes, clients and users in FILE',
  '  import FILE [--format keycloak|auth0|idp] [--dry-run]   users (and clients) from another provider',
  '  clients add --id ID [--name N] [--public] [--grant G]... [--scope S]... [--redirect-uri U]...',
  '              [--post-logout-redirect-uri U]... [--cors-origin O]... [--access-token-lifetime SEC]',
  '              [--require-consent] [--secret-expires-at ISO8601]',
  '  clients update ID [--name N] [--add-redirect-uri U]... [--remove-redirect-uri U]... (also -scope,',
  '                 -grant, -post-logout-redirect-uri, -cors-origin) [--access-token-lifetime SEC]',
  '                 [--require-consent | --no-require-consent] [--secret-expires-at ISO8601|none]',
  '  clients list | show ID | disable ID | enable ID | remove ID',
  '              | rotate-secret ID [--keep-old-for DURATION]',
  '  users add --username U (--password P | --password-stdin) [--given-name G] [--family-name F]',
  '            [--email E] [--email-verified] [--phone P] [--phone-verified] [--role R]...',
  '  users update U [--given-name G] [--family-name F] [--name N] [--email E] [--[no-]email-verified]',
  '               [--phone P] [--[no-]phone-verified] [--role R]... | [--no-roles] | [--add-role R]...',
  '               [--remove-role R]... [--password-stdin]',
  '  users list | show U | lock U | unlock U | remove U | require-password-change U | require-mfa U',
  '        | reset-mfa U',
  '  scopes add NAME | list | remove NAME   API scopes such as orders.read',
  '  keys list | rotate | retire KID [--force]  signing keys',
  '  webhooks add --url U [--event TYPE]... [--description D]   an endpoint events are delivered to',
  '  webhooks list | show ID | enable ID | disable ID | remove ID | test ID | rotate-secret ID',
  '           | deliveries ID | redeliver ID DELIVERY_ID',
  '  events [--type T]... [--user SUB] [--client ID] [--since T] [--until T] [--limit N]   the audit log,',
  '                                         newest first',
  '  secrets reseal                         seal under IDP_SECRET what a previous secret sealed',
  '  secret-hash                            read a client secret on stdin, print the hash to store',
  '  sql [-c STATEMENT]                     psql on the configured database (the embedded one too);',
  '                                         -c runs one statement and prints its rows',
  '  doctor [--url URL] [--management-url URL]  check a deployment from outside',
  '  help                                   this text',
  '',
  '`idp COMMAND --help` describes one command. --json prints one JSON document, errors included',
  '({"error": "...", "exit": N}). Exit code 0 on success, 1 on a refused operation, 2 on bad usage.',
];

/** `[usage, what it does]` of every command and subcommand, keyed by its words. */
const COMMANDS: Record<string, [string[], string]> = {
  serve: [['idp serve'], 'Starts the service (what npm start runs); it applies pending migrations first.'],
  migrate: [['idp migrate'], 'Applies pending database migrations and names each one applied.'],
  import: [['idp import FILE [--format keycloak|auth0|idp] [--dry-run]'], 'Imports the users (with their password hashes) and clients of another provider\'s export, record by record: a refused record refuses nothing else; --dry-run writes nothing and reports the same.'],
  seed: [['idp seed FILE.json'], 'Upserts the API scopes, clients and users of FILE in one transaction; a file with a wrong field is refused whole.'],
  'clients add': [[
    'idp clients add --id ID [--name N] [--public] [--grant G]... [--scope S]... [--redirect-uri U]...',
    '                [--post-logout-redirect-uri U]... [--cors-origin O]... [--access-token-lifetime SEC]',
    '                [--require-consent] [--secret-expires-at ISO8601]',
  ], 'Registers a client. A confidential client gets a generated secret, printed only this once. Each --scope must be a standard scope or an API scope (idp scopes add).'],
  'clients update': [[
    'idp clients update ID [--name N] [--add-redirect-uri U]... [--remove-redirect-uri U]...',
    '                   [--add-post-logout-redirect-uri U]... [--remove-post-logout-redirect-uri U]...',
    '                   [--add-cors-origin O]... [--remove-cors-origin O]... [--add-scope S]... [--remove-scope S]...',
    '                   [--add-grant G]... [--remove-grant G]... [--access-token-lifetime SEC]',
    '                   [--require-consent | --no-require-consent] [--secret-expires-at ISO8601|none]',
  ], 'Changes the fields named and keeps the others (the client id and its secret stay); the rules of clients add hold. Prints the fields changed.'],
  'clients list': [['idp clients list'], 'Lists the clients.'],
  'clients show': [['idp clients show ID'], 'Shows one client (never its secret).'],
  'clients disable': [['idp clients disable ID'], 'Disables a client: it gets no token until enabled again.'],
  'clients enable': [['idp clients enable ID'], 'Enables a disabled client.'],
  'clients remove': [['idp clients remove ID'], 'Removes a client.'],
  'clients rotate-secret': [['idp clients rotate-secret ID [--keep-old-for DURATION]'], 'Replaces the secret of a confidential client; the old one stops working at once, or with --keep-old-for (1d, 12h, 30m, 3600s or seconds; at most 30 days) keeps working that long so the client can switch without downtime.'],
  'users add': [[
    'idp users add --username U (--password P | --password-stdin) [--given-name G] [--family-name F]',
    '              [--email E] [--email-verified] [--phone P] [--phone-verified] [--role R]...',
  ], 'Adds a local account. --password-stdin reads the password from the first line of stdin (kept out of the shell history). The password must follow the policy of the password change page.'],
  'users update': [[
    'idp users update U [--given-name G] [--family-name F] [--name N] [--email E] [--email-verified | --no-email-verified]',
    '                   [--phone P] [--phone-verified | --no-phone-verified] [--role R]... [--no-roles]',
    '                   [--add-role R]... [--remove-role R]... [--password-stdin]',
  ], 'Changes the fields named and keeps the others (the sub stays). An empty value (--email "") clears a field; --role replaces the roles. --password-stdin sets a new password from the first line of stdin and revokes the user\'s tokens. Prints the fields changed.'],
  'users list': [['idp users list'], 'Lists the users.'],
  'users show': [['idp users show U'], 'Shows one user (never a password hash): their second factors, how many recovery codes are left, when each was made and last used.'],
  'users lock': [['idp users lock U'], 'Locks an account: it can no longer sign in.'],
  'users unlock': [['idp users unlock U'], 'Unlocks an account.'],
  'users remove': [['idp users remove U'], 'Removes an account with its consents and refresh tokens.'],
  'users require-password-change': [['idp users require-password-change U'], 'Makes the user choose a new password at the next sign-in.'],
  'users require-mfa': [['idp users require-mfa U'], 'Makes the user set up a second factor (an authenticator app or a passkey) at the next sign-in, unless they have one; the requirement stays after enrolment.'],
  'users reset-mfa': [['idp users reset-mfa U'], 'Removes all of the user\'s second factors (authenticator app, passkeys, recovery codes) and revokes their tokens: the user sets up a new one at the next sign-in, and is mailed a security notice when they have an address and mail is configured.'],
  'scopes add': [['idp scopes add NAME'], 'Adds an API scope (such as orders.read) that clients may then be given.'],
  'scopes list': [['idp scopes list'], 'Lists the API scopes.'],
  'scopes remove': [['idp scopes remove NAME'], 'Removes an API scope: from then on no token grants it, even to clients that still list it.'],
  'keys list': [['idp keys list'], 'Lists the signing keys with their state.'],
  'keys rotate': [['idp keys rotate'], 'Adds a signing key and makes it the signer at once; the previous one stays published. Relying parties that cached the key set learn the new key when they refetch it (at most the JWKS max-age, 300 s).'],
  'keys retire': [['idp keys retire KID [--force]'], 'Stops publishing a signing key that is no longer the signer, once every token it signed has expired; --force retires it sooner, which invalidates those tokens at once.'],
  'webhooks add': [['idp webhooks add --url U [--event TYPE]... [--description D]'], 'Adds a webhook endpoint that receives the events of each --event type (an audit event\'s type; none, or *, for every type), signed per Standard Webhooks. Prints its signing secret (whsec_…) only this once. In production the URL must be https and must not point to a loopback, private, link-local or reserved address (IDP_WEBHOOK_ALLOWED_NETWORKS allows ranges).'],
  'webhooks list': [['idp webhooks list'], 'Lists the webhook endpoints.'],
  'webhooks show': [['idp webhooks show ID'], 'Shows one endpoint (never its secret).'],
  'webhooks enable': [['idp webhooks enable ID'], 'Enables an endpoint (one the service disabled too: its pending deliveries resume).'],
  'webhooks disable': [['idp webhooks disable ID'], 'Disables an endpoint: nothing is delivered to it until enabled again.'],
  'webhooks remove': [['idp webhooks remove ID'], 'Removes an endpoint with its pending deliveries.'],
  'webhooks test': [['idp webhooks test ID'], 'Sends a webhook.test event to the endpoint.'],
  'webhooks rotate-secret': [['idp webhooks rotate-secret ID'], 'Gives the endpoint a new signing secret, printed only this once; the previous one keeps signing beside it for 24 hours.'],
  'webhooks deliveries': [['idp webhooks deliveries ID'], 'Lists the endpoint\'s recent delivery attempts: event, attempt, time, HTTP status or error kind, duration, next attempt.'],
  'webhooks redeliver': [['idp webhooks redeliver ID DELIVERY_ID'], 'Makes a delivery due again now, from the start of the retry schedule.'],
  events: [['idp events [--type T]... [--user SUB] [--client ID] [--since T] [--until T] [--limit N]'], 'Prints the audit log, newest first (50 events unless --limit says how many): one line per event with its time, type, user, client and other fields; with --json, one JSON object per line. --type may repeat (any of them); --user takes a sub; --since (at or after) and --until (before) take RFC 3339 times such as 2026-11-29T10:00:00Z.'],
  'secrets reseal': [['idp secrets reseal'], 'Re-encrypts the signing keys, TOTP secrets and the secret check under IDP_SECRET, so that IDP_SECRET_PREVIOUS can be dropped; it opens everything before it writes anything.'],
  sql: [['idp sql [-c STATEMENT]'], 'Opens psql on the configured database: DATABASE_URL, or the embedded database over its socket in IDP_DATA_DIR, beside a running server too. With -c, runs the statement (several, separated by semicolons, run as one transaction) and prints the rows of the last one, or its command and the rows it changed.'],
  'secret-hash': [['idp secret-hash'], 'Reads a client secret on stdin and prints the hash to store in clients.secret_hash.'],
  doctor: [['idp doctor [--url URL] [--management-url URL]'], 'Checks a deployment from outside through its public URL (default IDP_BASE_URL), judging by what the service says it runs with on its management port (default from IDP_MANAGEMENT_PORT and IDP_MANAGEMENT_HOST); one line per check, exit 1 on a failure.'],
  help: [['idp help'], 'Lists the commands.'],
};

/** `--help` or `-h` anywhere among the arguments asks for help instead of running the command. */
export function wantsHelp(args: readonly string[]): boolean {
  return args.includes('--help') || args.includes('-h');
}

/**
 * The help for `idp WORDS... --help`: the subcommand's when WORDS name one, every subcommand of
 * a family (`idp clients --help`), or the whole list for an unknown or missing command.
 */
export function helpText(words: readonly string[]): string[] {
  const [command, sub] = words.filter((w) => !w.startsWith('-'));
  if (command === undefined) return USAGE;
  const exact = sub === undefined ? undefined : COMMANDS[`${command} ${sub}`];
  const entries = exact ? [exact] : Object.entries(COMMANDS).filter(([name]) => name === command || name.startsWith(`${command} `)).map(([, entry]) => entry);
  if (entries.length === 0) return USAGE;
  return entries.flatMap(([usage, what], i) => [...(i > 0 ? [''] : []), ...usage.map((line, j) => `${j === 0 ? 'usage: ' : '       '}${line}`), `  ${what}`]);
}
