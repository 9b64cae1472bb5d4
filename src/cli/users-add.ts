/** `idp users add`: a local account with an argon2id password hash; its subject is its new id. */
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
  usage: 'idp users add --username U --password P [options], see idp help',
  options: {
    username: { type: 'string' },
    password: { type: 'string' },
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

/** The account the flags describe, less its id and password hash. */
function userFromFlags(args: string[]): { user: Omit<UserInput, 'id' | 'subject' | 'passwordHash'>; password: string } {
  const { values } = parseCommand(ADD_SPEC, args);
  const username = required('username', values.username);
  const password = required('password', values.password);
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
      totpSecretSealed: null,
      locked: false,
      mustChangePassword: false,
      mustEnrolMfa: false,
    },
  };
}

export async function addUser(args: string[], context: CliContext): Promise<ExitCode> {
  const { user, password } = userFromFlags(args);
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
