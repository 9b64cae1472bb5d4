/**
 * The administrators' command line (CONTRACT section 3): every `idp` command but `serve`, which
 * main.ts runs itself. Returns the exit code; a UsageError (2) or RefusedError (1) thrown by a
 * command is printed by main.ts as one line.
 */
import { runClients } from './clients.ts';
import type { CliContext, ExitCode } from './context.ts';
import { doctorCommand } from './doctor.ts';
import { runKeys } from './keys.ts';
import { runMigrate } from './migrate.ts';
import { runScopes } from './scopes.ts';
import { runSecretHash } from './secret-hash.ts';
import { runSecrets } from './secrets.ts';
import { runSeed } from './seed.ts';
import { runUsers } from './users.ts';

export const USAGE = [
  'usage: idp COMMAND [--json]',
  '',
  '  serve                                  start the service',
  '  migrate                                apply database migrations',
  '  seed FILE.json                         upsert the API scopes, clients and users in FILE',
  '  clients add --id ID [--name N] [--public] [--grant G]... [--scope S]... [--redirect-uri U]...',
  '              [--post-logout-redirect-uri U]... [--cors-origin O]... [--access-token-lifetime SEC]',
  '              [--require-consent] [--secret-expires-at ISO8601]',
  '  clients list | show ID | disable ID | enable ID | remove ID | rotate-secret ID',
  '  users add --username U --password P [--given-name G] [--family-name F] [--email E]',
  '            [--email-verified] [--phone P] [--phone-verified] [--role R]...',
  '  users list | show U | lock U | unlock U | remove U | require-password-change U | require-mfa U',
  '  scopes add NAME | list | remove NAME   API scopes such as orders.read',
  '  keys list | rotate | retire KID        signing keys',
  '  secrets reseal                         seal under IDP_SECRET what a previous secret sealed',
  '  secret-hash                            read a client secret on stdin, print the hash to store',
  '  doctor [--url URL]                     check a deployment from outside',
  '  help                                   this text',
  '',
  '--json prints one JSON document. Exit code 0 on success, 1 on a refused operation, 2 on bad usage.',
];

type Command = (args: string[], context: CliContext) => Promise<ExitCode>;

const COMMANDS: Record<string, Command> = {
  migrate: runMigrate,
  seed: runSeed,
  clients: runClients,
  users: runUsers,
  scopes: runScopes,
  keys: runKeys,
  secrets: runSecrets,
  'secret-hash': runSecretHash,
  doctor: doctorCommand,
  help: async (_args, context) => {
    for (const line of USAGE) context.out(line);
    return 0;
  },
};

export async function runCli(command: string, args: string[], context: CliContext): Promise<ExitCode> {
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (run) return run(args, context);
  const known = ['--help', '-h'].includes(command);
  const write = known ? context.out : context.err;
  if (!known) write(`idp: unknown command "${command}"`);
  for (const line of USAGE) write(line);
  return known ? 0 : 2;
}
