/** `idp users add | list | show U | lock U | unlock U | remove U | require-password-change U | require-mfa U`. */
import type { SignInSourceKind, DurableStore, UserFlag, UserRecord } from '../store/types.ts';
import { parseCommand, subcommand } from './args.ts';
import { auditChange } from './audit.ts';
import { RefusedError, type CliContext, type ExitCode } from './context.ts';
import { formatTable, report } from './output.ts';
import { USER_TABLE_HEADERS, userDocument, userFieldLines, userRow } from './user-view.ts';
import { addUser } from './users-add.ts';

type UserCommand = (user: UserRecord, durable: DurableStore, context: CliContext) => Promise<void>;

/**
 * Finds an account by username: first among the users of the configured sign-in source, then
 * among the others (a deployment that changed its source still administers the old records).
 */
async function findUser(durable: DurableStore, context: CliContext, username: string): Promise<UserRecord> {
  const sources: SignInSourceKind[] = [context.config.signIn.source, 'local', 'ldap', 'oidc'];
  for (const source of new Set(sources)) {
    const user = await durable.users.getByUsername(source, username);
    if (user) return user;
  }
  throw new RefusedError(`no user named ${username}`);
}

const showUser: UserCommand = async (user, _durable, context) => {
  report(context, userDocument(user), () => userFieldLines(user));
};

const WIRE_FLAG: Record<UserFlag, string> = {
  locked: 'locked',
  mustChangePassword: 'must_change_password',
  mustEnrolMfa: 'must_enrol_mfa',
};

function setFlag(flag: UserFlag, value: boolean, done: string): UserCommand {
  return async (user, durable, context) => {
    if (!(await durable.users.update(user.id, { [flag]: value }))) throw new RefusedError(`no user named ${user.username}`);
    auditChange(context, { action: 'update', resource: 'user', resource_id: user.subject, fields: [WIRE_FLAG[flag]] });
    report(context, { username: user.username, sub: user.subject, [WIRE_FLAG[flag]]: value }, () => [`user ${user.username} ${done}`]);
  };
}

/**
 * Deleting the row also deletes the user's consents and refresh token families (ON DELETE
 * CASCADE); the database first records their tokens as revoked (as it does when a user is
 * locked or flagged: migration 2026-11-24-0004), and every running instance hears of it.
 */
const removeUser: UserCommand = async (user, durable, context) => {
  if (!(await durable.users.remove(user.id))) throw new RefusedError(`no user named ${user.username}`);
  auditChange(context, { action: 'delete', resource: 'user', resource_id: user.subject, fields: [] });
  report(context, { username: user.username, sub: user.subject, removed: true }, () => [`user ${user.username} removed`]);
};

const BY_USERNAME: Record<string, UserCommand> = {
  show: showUser,
  lock: setFlag('locked', true, 'locked'),
  unlock: setFlag('locked', false, 'unlocked'),
  remove: removeUser,
  'require-password-change': setFlag('mustChangePassword', true, 'must change their password at the next sign-in'),
  'require-mfa': setFlag('mustEnrolMfa', true, 'must set up an authenticator app at the next sign-in'),
};

async function listUsers(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp users list', options: {}, positionals: [] }, args);
  const users = await (await context.openDurable()).users.list();
  report(context, { users: users.map(userDocument) }, () => formatTable(USER_TABLE_HEADERS, users.map(userRow), 'no users'));
}

export async function runUsers(args: string[], context: CliContext): Promise<ExitCode> {
  const { name, rest } = subcommand('users', ['add', 'list', ...Object.keys(BY_USERNAME)], args);
  if (name === 'add') return addUser(rest, context);
  if (name === 'list') {
    await listUsers(rest, context);
    return 0;
  }
  const command = BY_USERNAME[name] as UserCommand;
  const { positionals } = parseCommand({ usage: `idp users ${name} U`, options: {}, positionals: ['U'] }, rest);
  const durable = await context.openDurable();
  await command(await findUser(durable, context, positionals[0] as string), durable, context);
  return 0;
}
