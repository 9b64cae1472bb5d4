/** `idp users add`: the flags become a local account for src/admin/users.ts, which adds it. */
import { RULE_MESSAGES, isEmailAddress, isPlainText } from '../admin/rules.ts';
import { createUser, type NewLocalUser } from '../admin/users.ts';
import { parseCommand } from './args.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { report } from './output.ts';
import { changeDeps, cliActor } from './audit.ts';
import { userDocument } from './user-view.ts';

const ADD_SPEC = {
  usage: 'idp users add --username U (--password P | --password-stdin) [options], see idp users add --help',
  options: {
    username: { type: 'string' },
    password: { type: 'string' },
    'password-stdin': { type: 'boolean' },
    'given-name': { type: 'string' },
    'family-name': { type: 'string' },
    email: { type: 'string' },
    'email-verified': { type: 'boolean' },
    phone: { type: 'string' },
    'phone-verified': { type: 'boolean' },
    role: { type: 'string', multiple: true },
  },
  positionals: [],
} as const;

function required(flag: string, value: string | undefined): string {
  if (value === undefined) throw new UsageError(`missing option --${flag} (usage: ${ADD_SPEC.usage})`);
  if (value.trim() === '') throw new UsageError(`--${flag}: ${RULE_MESSAGES.notEmpty}`);
  return value;
}

/**
 * The password of --password, or the first line of stdin with --password-stdin (a password on
 * the command line shows in the shell history and to `ps`).
 */
async function readPassword(values: { password?: string | undefined; 'password-stdin'?: boolean | undefined }, context: CliContext): Promise<string> {
  if (values['password-stdin'] && values.password !== undefined) throw new UsageError(`give --password or --password-stdin, not both (usage: ${ADD_SPEC.usage})`);
  if (!values['password-stdin']) return required('password', values.password);
  const password = (await context.readStdin()).split(/\r?\n/)[0] ?? '';
  if (password === '') throw new UsageError(`--password-stdin: the first line of stdin ${RULE_MESSAGES.notEmpty}`);
  return password;
}

/** The account the flags describe. */
async function userFromFlags(args: string[], context: CliContext): Promise<NewLocalUser> {
  const { values } = parseCommand(ADD_SPEC, args);
  const username = required('username', values.username);
  const password = await readPassword(values, context);
  if (values.email !== undefined && isPlainText(values.email) && !isEmailAddress(values.email)) throw new UsageError(`--email "${values.email}": ${RULE_MESSAGES.email}`);
  return {
    username,
    password,
    givenName: values['given-name'] ?? null,
    familyName: values['family-name'] ?? null,
    email: values.email ?? null,
    emailVerified: values['email-verified'] ?? false,
    phoneNumber: values.phone ?? null,
    phoneNumberVerified: values['phone-verified'] ?? false,
    roles: values.role ?? [],
  };
}

export async function addUser(args: string[], context: CliContext): Promise<ExitCode> {
  const input = await userFromFlags(args, context);
  const { user: { record: user } } = await createUser(await changeDeps(context), input, cliActor(context));
  report(context, userDocument(user), () => [`created user ${input.username} (sub ${user.id})`]);
  return 0;
}
