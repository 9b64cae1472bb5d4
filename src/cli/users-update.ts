/**
 * `idp users update U`: the flags become a patch for src/admin/user-update.ts (what no flag names
 * is kept; a new password ends the user's tokens); it prints the fields it changed.
 */
import { RULE_MESSAGES, isEmailAddress, isPlainText } from '../admin/rules.ts';
import { findUser } from '../admin/users.ts';
import { updateUser, type UserPatch } from '../admin/user-update.ts';
import { editedList, onOrOff, parseCommand } from './args.ts';
import { cliActor } from './audit.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { report } from './output.ts';
import { userDocument } from './user-view.ts';

const USAGE = 'idp users update U [options], see idp users update --help';

const UPDATE_SPEC = {
  usage: USAGE,
  options: {
    'given-name': { type: 'string' },
    'family-name': { type: 'string' },
    name: { type: 'string' },
    email: { type: 'string' },
    'email-verified': { type: 'boolean' },
    'no-email-verified': { type: 'boolean' },
    phone: { type: 'string' },
    'phone-verified': { type: 'boolean' },
    'no-phone-verified': { type: 'boolean' },
    role: { type: 'string', multiple: true },
    'no-roles': { type: 'boolean' },
    'add-role': { type: 'string', multiple: true },
    'remove-role': { type: 'string', multiple: true },
    'password-stdin': { type: 'boolean' },
  },
  positionals: ['U'],
} as const;

type Values = ReturnType<typeof parseCommand<typeof UPDATE_SPEC.options>>['values'];

/** An empty value clears the field (`--email ""`). */
const text = (value: string | undefined): string | null | undefined => (value === undefined ? undefined : value === '' ? null : value);

function roles(values: Values, stored: readonly string[]): string[] | undefined {
  const { role, 'add-role': add, 'remove-role': remove } = values;
  if ((role !== undefined || values['no-roles']) && (add !== undefined || remove !== undefined)) {
    throw new UsageError(`give --role/--no-roles or --add-role/--remove-role, not both (usage: ${USAGE})`);
  }
  if (values['no-roles'] && role !== undefined) throw new UsageError(`give --role or --no-roles, not both (usage: ${USAGE})`);
  if (values['no-roles']) return [];
  if (role !== undefined) return role;
  if (add === undefined && remove === undefined) return undefined;
  return editedList(stored, add ?? [], remove ?? []);
}

async function readPassword(context: CliContext): Promise<string> {
  const password = (await context.readStdin()).split(/\r?\n/)[0] ?? '';
  if (password === '') throw new UsageError(`--password-stdin: the first line of stdin ${RULE_MESSAGES.notEmpty}`);
  return password;
}

function patchFromFlags(values: Values, storedRoles: readonly string[]): UserPatch {
  const email = text(values.email);
  if (typeof email === 'string' && isPlainText(email) && !isEmailAddress(email)) throw new UsageError(`--email "${email}": ${RULE_MESSAGES.email}`);
  const patch: UserPatch = {
    given_name: text(values['given-name']),
    family_name: text(values['family-name']),
    name: text(values.name),
    email,
    email_verified: onOrOff(values, 'email-verified', USAGE),
    phone_number: text(values.phone),
    phone_number_verified: onOrOff(values, 'phone-verified', USAGE),
    roles: roles(values, storedRoles),
  };
  if (Object.values(patch).every((value) => value === undefined) && !values['password-stdin']) throw new UsageError(`no change given (usage: ${USAGE})`);
  return patch;
}

export async function updateUserCommand(args: string[], context: CliContext): Promise<ExitCode> {
  const { values, positionals } = parseCommand(UPDATE_SPEC, args);
  // Flags are checked before the database is opened, so bad usage is exit 2 whatever is stored.
  patchFromFlags(values, []);
  const password = values['password-stdin'] ? await readPassword(context) : undefined;
  const durable = await context.openDurable();
  const user = await findUser(durable, positionals[0] as string, [context.config.signIn.source]);
  const patch = { ...patchFromFlags(values, user.roles), password };
  // A password given on stdin is set, and the user's tokens end, even when it is the current one.
  const updated = await updateUser({ durable, secret: context.secret, clock: context.clock }, user, patch, cliActor(context), { explicit: true });
  report(context, { ...userDocument(updated.user.record), changed: updated.changed }, () => [
    updated.changed.length === 0 ? `user ${user.username}: nothing changed` : `user ${user.username}: ${updated.changed.join(', ')}`,
  ]);
  return 0;
}
