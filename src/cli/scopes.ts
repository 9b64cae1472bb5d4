/** `idp scopes add NAME | list | remove NAME`: the API scopes clients may ask for (such as orders.read). */
import { addApiScope, listApiScopes, removeApiScope } from '../admin/scopes.ts';
import { RULE_MESSAGES, isScopeToken } from '../admin/rules.ts';
import { parseCommand, subcommand } from './args.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { changeDeps, cliActor } from './audit.ts';
import { report } from './output.ts';

async function addScope(args: string[], context: CliContext): Promise<void> {
  const { positionals } = parseCommand({ usage: 'idp scopes add NAME', options: {}, positionals: ['NAME'] }, args);
  const name = positionals[0] as string;
  // A malformed argument is a usage error (exit 2), as for every flag.
  if (!isScopeToken(name)) throw new UsageError(`scope "${name}": ${RULE_MESSAGES.scopeToken}`);
  await addApiScope(await changeDeps(context), name, cliActor(context));
  report(context, { api_scope: name, created: true }, () => [`API scope ${name} added`]);
}

async function listScopes(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp scopes list', options: {}, positionals: [] }, args);
  const scopes = await listApiScopes(await context.openDurable());
  report(context, { api_scopes: scopes }, () => (scopes.length === 0 ? ['no API scopes'] : scopes));
}

async function removeScope(args: string[], context: CliContext): Promise<void> {
  const { positionals } = parseCommand({ usage: 'idp scopes remove NAME', options: {}, positionals: ['NAME'] }, args);
  const name = positionals[0] as string;
  await removeApiScope(await changeDeps(context), name, cliActor(context));
  report(context, { api_scope: name, removed: true }, () => [`API scope ${name} removed`]);
}

const SCOPE_COMMANDS: Record<string, (args: string[], context: CliContext) => Promise<void>> = {
  add: addScope,
  list: listScopes,
  remove: removeScope,
};

export async function runScopes(args: string[], context: CliContext): Promise<ExitCode> {
  const { name, rest } = subcommand('scopes', Object.keys(SCOPE_COMMANDS), args);
  await SCOPE_COMMANDS[name]?.(rest, context);
  return 0;
}
