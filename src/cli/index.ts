/**
 * The administrators' command line (the README's "Command line" section): every `idp` command but `serve`, which
 * main.ts runs itself. Returns the exit code; a UsageError (2) or RefusedError (1) thrown by a
 * command is printed by main.ts as one line.
 */
import { AdminError } from '../admin/errors.ts';
import { escapeControlCharacters } from '../control-characters.ts';
import { runClients } from './clients.ts';
import { RefusedError, UsageError, type CliContext, type ExitCode } from './context.ts';
import { doctorCommand } from './doctor.ts';
import { runEvents } from './events.ts';
import { USAGE, helpText, wantsHelp } from './help.ts';
import { runImport } from './import.ts';
import { runKeys } from './keys.ts';
import { runMigrate } from './migrate.ts';
import { runScopes } from './scopes.ts';
import { runSecretHash } from './secret-hash.ts';
import { runSecrets } from './secrets.ts';
import { runSeed } from './seed.ts';
import { runSql } from './sql.ts';
import { runUsers } from './users.ts';
import { runWebhooks } from './webhooks.ts';

type Command = (args: string[], context: CliContext) => Promise<ExitCode>;

const COMMANDS: Record<string, Command> = {
  migrate: runMigrate,
  seed: runSeed,
  import: runImport,
  clients: runClients,
  users: runUsers,
  scopes: runScopes,
  keys: runKeys,
  webhooks: runWebhooks,
  events: runEvents,
  secrets: runSecrets,
  'secret-hash': runSecretHash,
  sql: runSql,
  doctor: doctorCommand,
  // `idp help clients add` says what `idp clients add --help` says.
  help: async (args, context) => {
    for (const line of helpText(args)) context.out(line);
    return 0;
  },
};

/**
 * Runs the command. The admin layer's refusal becomes the one line (exit 1) it always was; any
 * refusal's line is escaped, since it may quote a stored value or a typed one.
 */
export async function runCli(command: string, args: string[], context: CliContext): Promise<ExitCode> {
  try {
    return await dispatch(command, args, context);
  } catch (error) {
    if (error instanceof AdminError) throw new RefusedError(escapeControlCharacters(error.message));
    if (error instanceof RefusedError) throw new RefusedError(escapeControlCharacters(error.message), error.details.map((line) => escapeControlCharacters(line)));
    if (error instanceof UsageError) throw new UsageError(escapeControlCharacters(error.message));
    throw error;
  }
}

async function dispatch(command: string, args: string[], context: CliContext): Promise<ExitCode> {
  if (wantsHelp([command, ...args])) {
    for (const line of helpText([command, ...args])) context.out(line);
    return 0;
  }
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (run) return run(args, context);
  // Under --json the error is the one JSON document; for a person, the list of commands follows.
  if (context.json) throw new UsageError(`unknown command "${command}" (see idp --help)`);
  context.err(`idp: unknown command "${command}"`);
  for (const line of USAGE) context.err(line);
  return 2;
}
