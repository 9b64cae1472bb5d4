/** `idp users add | list | update U | show U | lock U | unlock U | remove U | require-password-change U | require-mfa U | reset-mfa U`. */
import { resetSecondFactors } from '../admin/second-factors.ts';
import { findUser, listUsers, removeUser, setUserFlag } from '../admin/users.ts';
import { createSecurityNotices } from '../mail/security-notices.ts';
import { mailBrandOf } from '../mail/setup.ts';
import type { UserFlag, UserRecord } from '../store/records.ts';
import type { DurableStore } from '../store/types.ts';
import { parseCommand, subcommand } from './args.ts';
import type { CliContext, ExitCode } from './context.ts';
import { changeDeps, cliActor } from './audit.ts';
import { formatTable, report } from './output.ts';
import { USER_TABLE_HEADERS, userDocument, userFieldLines, userRow } from './user-view.ts';
import { addUser } from './users-add.ts';
import { updateUserCommand } from './users-update.ts';

type UserCommand = (user: UserRecord, durable: DurableStore, context: CliContext) => Promise<void>;

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
    await setUserFlag(await changeDeps(context, durable), user, flag, value, cliActor(context));
    report(context, { username: user.username, sub: user.subject, [WIRE_FLAG[flag]]: value }, () => [`user ${user.username} ${done}`]);
  };
}

const removeCommand: UserCommand = async (user, durable, context) => {
  await removeUser(await changeDeps(context, durable), user, cliActor(context));
  report(context, { username: user.username, sub: user.subject, removed: true }, () => [`user ${user.username} removed`]);
};

/** The notice's line of detail: who removed the factors, and what comes next. */
const RESET_NOTICE_DETAIL = 'An administrator reset your second factors; you will set up a new one at your next sign-in.';

/**
 * Someone lost every second factor: remove them all, end the user's tokens, enrol again at the
 * next sign-in. The user is mailed the `mfa_removed` notice, as for any change of their factors;
 * the command waits for the mail server (for a while) and warns, without failing, if it was not sent.
 */
const resetMfa: UserCommand = async (user, durable, context) => {
  const result = await resetSecondFactors(await changeDeps(context, durable), user, cliActor(context));
  const document = { username: user.username, sub: user.subject, removed: result.removed, must_enrol_mfa: result.user.mustEnrolMfa };
  report(context, document, () => [result.kind === 'reset'
    ? `user ${user.username}: second factors removed (${result.removed.join(', ')}), tokens revoked; they set up a new one at the next sign-in`
    : `user ${user.username} has no second factor: nothing to reset`]);
  if (result.kind === 'reset') await mailResetNotice(result.user, context);
};

/** The reset happened already: a notice that cannot be sent is one warning line, never a failure. */
async function mailResetNotice(user: UserRecord, context: CliContext): Promise<void> {
  if (!user.email) return;
  const mailer = context.mailer();
  if (!mailer.available) return;
  createSecurityNotices({ mailer, brand: mailBrandOf(context.config), clock: context.clock }).mail(user, 'mfa_removed', RESET_NOTICE_DETAIL);
  const failures = await context.closeMailer();
  if (failures.length > 0) context.err(`warning: the security notice (second factors removed) could not be mailed to user ${user.username}: ${failures.join('; ')}`);
}

const BY_USERNAME: Record<string, UserCommand> = {
  show: showUser,
  lock: setFlag('locked', true, 'locked'),
  unlock: setFlag('locked', false, 'unlocked'),
  remove: removeCommand,
  'require-password-change': setFlag('mustChangePassword', true, 'must change their password at the next sign-in'),
  'require-mfa': setFlag('mustEnrolMfa', true, 'must set up a second factor (an authenticator app or a passkey) at the next sign-in'),
  'reset-mfa': resetMfa,
};

async function listCommand(args: string[], context: CliContext): Promise<void> {
  parseCommand({ usage: 'idp users list', options: {}, positionals: [] }, args);
  const users = await listUsers(await context.openDurable());
  report(context, { users: users.map(userDocument) }, () => formatTable(USER_TABLE_HEADERS, users.map(userRow), 'no users'));
}

export async function runUsers(args: string[], context: CliContext): Promise<ExitCode> {
  const { name, rest } = subcommand('users', ['add', 'list', 'update', ...Object.keys(BY_USERNAME)], args);
  if (name === 'add') return addUser(rest, context);
  if (name === 'update') return updateUserCommand(rest, context);
  if (name === 'list') {
    await listCommand(rest, context);
    return 0;
  }
  const command = BY_USERNAME[name] as UserCommand;
  const { positionals } = parseCommand({ usage: `idp users ${name} U`, options: {}, positionals: ['U'] }, rest);
  const durable = await context.openDurable();
  await command(await findUser(durable, positionals[0] as string, [context.config.signIn.source]), durable, context);
  return 0;
}
