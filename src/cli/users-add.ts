/** `idp users add`: a local account with an argon2id password hash; its subject is its new id. */
import { newPasswordProblem } from '../sources/password-policy.ts';
import { hashPassword } from '../sources/passwords.ts';
import type { UserInput } from '../store/types.ts';
import { randomToken } from '../tokens/opaque.ts';
import { parseCommand } from './args.ts';
import { RefusedError, UsageError, type CliContext, type ExitCode } from './context.ts';
import { refuseConstraintViolations } from './database-errors.ts';
import { report } from './output.ts';
import { RULE_MESSAGES, isEmail } from './rules.ts';
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

/** The account the flags describe, less its id and password hash. */
async function userFromFlags(args: string[], context: CliContext): Promise<{ user: Omit<UserInput, 'id' | 'subject' | 'passwordHash'>; password: string }> {
  const { values } = parseCommand(ADD_SPEC, args);
  const username = required('username', values.username);
  const password = await readPassword(values, context);
  // The rules of the password change page (NIST SP 800-63B §3.1.1.2), for every way in.
  const problem = newPasswordProblem(password, username);
  if (problem !== undefined) throw new RefusedError(`password of ${username} refused: ${problem}`);
  if (values.email !== undefined && !isEmail(values.email)) throw new UsageError(`--email "${values.email}": ${RULE_MESSAGES.email}`);
  const givenName = values['given-name'] ?? null;
  const familyName = values['family-name'] ?? null;
  return {
    password,
    user: {
      source: 'local',
      username,
      givenName,
      familyName,
      // The full name (OpenID Connect `name` claim) as the parts given; there is no flag for it.
      name: [givenName, familyName].filter((part) => part !== null).join(' ') || null,
      email: values.email ?? null,
      emailVerified: values['email-verified'] ?? false,
      phoneNumber: values.phone ?? null,
      phoneNumberVerified: values['phone-verified'] ?? false,
      roles: [...new Set(values.role ?? [])],
      locked: false,
      mustChangePassword: false,
      mustEnrolMfa: false,
    },
  };
}

export async function addUser(args: string[], context: CliContext): Promise<ExitCode> {
  const { user, password } = await userFromFlags(args, context);
  const durable = await context.openDurable();
  if (await durable.users.getByUsername('local', user.username)) throw new RefusedError(`user ${user.username} already exists`);
  const passwordHash = await hashPassword(password);
  const id = randomToken(16);
  const created = { ...user, id, subject: id, passwordHash };
  await refuseConstraintViolations(`user ${user.username}`, () =>
    durable.transaction(async (tx) => {
      // Checked again in the transaction: adding must never replace an account (and its password).
      if (await tx.users.getByUsername('local', user.username)) throw new RefusedError(`user ${user.username} already exists`);
      await tx.users.upsert(created);
    }),
  );
  const stored = await durable.users.getById(id);
  report(context, stored ? userDocument(stored) : { id, sub: id, username: user.username }, () => [
    `created user ${user.username} (sub ${id})`,
  ]);
  return 0;
}
