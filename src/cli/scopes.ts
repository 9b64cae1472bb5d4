/** `idp scopes add NAME | list | remove NAME`: the API scopes clients may ask for (such as orders.read). */
import { parseCommand, subcommand } from './args.ts';
import { auditChange } from './audit.ts';
import { RefusedError, UsageError, type CliContext, type ExitCode } from './context.ts';
import { refuseConstraintViolations } from './database-errors.ts';
import { report } from './output.ts';
import { RESERVED_SCOPES, RULE_MESSAGES, isScopeToken } from './rules.ts';

async function addScope(args: string[], context: CliContext): Promise<void> {
  const { positionals } = parseCommand({ usage: 'idp scopes add NAME', options: {}, positionals: ['NAME'] }, args);
  const name = positionals[0] as string;
  if (!isScopeToken(name)) throw new UsageError(`scope "${name}": ${RULE_MESSAGES.scopeToken}`);
  if (RESERVED_SCOPES.includes(name)) throw new RefusedError(`scope ${name} is reserved by the service and cannot be an API scope`);
  const durable = await context.openDurable();
  const added = await refuseConstraintViolations(`API scope ${name}`, () => durable.apiScopes.add(name));
  if (!added) throw new RefusedError(`API scope ${name} already exists`);
  auditChange(context, { action: 'create', resource: 'api_scope', resource_id: name, fields: [] });
  report(context, { api_scope: name, created: true }, () => [`API scope ${name} added`]);
}

async function listScopes(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp scopes list', options: {}, positionals: [] }, args);
  const scopes = await (await context.openDurable()).apiScopes.list();
  report(context, { api_scopes: scopes }, () => (scopes.length === 0 ? ['no API scopes'] : scopes));
}

/** Clients that list the scope keep it in their `scopes` column; it is simply no longer granted. */
async function removeScope(args: string[], context: CliContext): Promise<void> {
  const { positionals } = parseCommand({ usage: 'idp scopes remove NAME', options: {}, positionals: ['NAME'] }, args);
  const name = positionals[0] as string;
  if (!(await (await context.openDurable()).apiScopes.remove(name))) throw new RefusedError(`no API scope named ${name}`);
  auditChange(context, { action: 'delete', resource: 'api_scope', resource_id: name, fields: [] });
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
