/**
 * What the service accepts, as strict zod schemas by wire names: the seed file (the README's
 * "Seed file" section), an import's records, and the Administration API's request bodies (what
 * it answers is answer-schemas.ts). A seed file that does not fit is refused whole:
 * `seedFileProblems` names the path of every wrong field, one line each.
 */
import { z } from 'zod';
import { MIN_CLIENT_SECRET_LENGTH } from '../tokens/opaque.ts';
import { AdminError, formatPath, type FieldPath, type FieldProblem } from './errors.ts';
import {
  RESERVED_SCOPES, RULE_MESSAGES, canonicalUsername, isBase32, isClientId, isEmailAddress, isGrantType, isLifetime, isOrigin,
  isPlainText, isRedirectUri, isScopeToken, parseInstant,
} from './rules.ts';
import { passwordHashProblem } from '../sources/password-hashes.ts';
import { passwordProblem } from './user-fields.ts';

const ruled = (rule: (value: string) => boolean, message: string) => z.string().refine(rule, message);
const plainText = () => ruled(isPlainText, RULE_MESSAGES.plainText);
const optionalText = plainText().nullable().optional();
const optionalFlag = z.boolean().optional();

export const apiScopeName = z.string().superRefine((name, ctx) => {
  if (!isScopeToken(name)) ctx.addIssue({ code: 'custom', message: RULE_MESSAGES.scopeToken });
  else if (RESERVED_SCOPES.includes(name)) ctx.addIssue({ code: 'custom', message: `${name} is reserved by the service` });
});

// A list given as null is cleared to [] on a record that exists, and takes the default on a new one.
export const clientSchema = z.strictObject({
  client_id: ruled(isClientId, RULE_MESSAGES.clientId),
  // A fast salted hash protects only a long secret (src/tokens/opaque.ts).
  client_secret: z.string().min(MIN_CLIENT_SECRET_LENGTH, `must be at least ${MIN_CLIENT_SECRET_LENGTH} characters`).nullable().optional(),
  secret_expires_at: ruled((v) => parseInstant(v) !== undefined, RULE_MESSAGES.instant).nullable().optional(),
  display_name: z.string().optional(),
  enabled: optionalFlag,
  grant_types: z.array(ruled(isGrantType, RULE_MESSAGES.grantType)).nullable().optional(),
  scopes: z.array(ruled(isScopeToken, RULE_MESSAGES.scopeToken)).nullable().optional(),
  redirect_uris: z.array(ruled(isRedirectUri, RULE_MESSAGES.redirectUri)).nullable().optional(),
  post_logout_redirect_uris: z.array(ruled(isRedirectUri, RULE_MESSAGES.redirectUri)).nullable().optional(),
  cors_origins: z.array(ruled(isOrigin, RULE_MESSAGES.origin)).nullable().optional(),
  access_token_lifetime: z.number().refine(isLifetime, RULE_MESSAGES.lifetime).optional(),
  require_consent: optionalFlag,
});

/** A client to register through the API or the command line: no secret is given, a confidential one is generated. */
export const newClientSchema = clientSchema.omit({ client_secret: true }).extend({
  public: z.boolean().optional().describe('A public client has no secret; a confidential one (the default) gets a generated secret, in this answer only.'),
});

// RFC 7396: a member left out is kept, null clears it. The secret changes by rotation only.
export const clientPatchSchema = clientSchema.omit({ client_id: true, client_secret: true });

export const userSchema = z.strictObject({
  username: ruled((v) => v.trim() !== '', RULE_MESSAGES.notEmpty).pipe(plainText()),
  // Required for a new user only (src/admin/seed-plan.ts): an existing one keeps its password.
  password: ruled((v) => v !== '', RULE_MESSAGES.notEmpty).optional(),
  // Or the password as another provider hashed it (src/sources/password-hashes.ts), stored as given.
  password_hash: z.string().superRefine((hash, ctx) => {
    const problem = passwordHashProblem(hash);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  }).optional(),
  given_name: optionalText,
  family_name: optionalText,
  name: optionalText,
  email: plainText().pipe(ruled(isEmailAddress, RULE_MESSAGES.email)).nullable().optional(),
  email_verified: optionalFlag,
  phone_number: optionalText,
  phone_number_verified: optionalFlag,
  roles: z.array(ruled((v) => v !== '', RULE_MESSAGES.notEmpty).pipe(plainText())).nullable().optional(),
  totp_secret: ruled(isBase32, RULE_MESSAGES.base32).nullable().optional(),
  locked: optionalFlag,
  must_change_password: optionalFlag,
  must_enrol_mfa: optionalFlag,
});

export const seedFileSchema = z.strictObject({
  api_scopes: z.array(apiScopeName).optional(),
  clients: z.array(clientSchema).optional(),
  users: z.array(userSchema).optional(),
});

export type SeedFile = z.output<typeof seedFileSchema>;
export type SeedClient = z.output<typeof clientSchema>;
export type SeedUser = z.output<typeof userSchema>;
export type NewClientFields = z.output<typeof newClientSchema>;


const EXPECTED: Record<string, string> = {
  string: 'a string', boolean: 'true or false', number: 'a number', array: 'a list', object: 'an object',
};

const pathOf = (path: readonly PropertyKey[]): FieldPath => path.map((key) => (typeof key === 'number' ? key : String(key)));

/** Each issue of a strict schema as the field it is about and what is wrong, in the rules' words. */
export function schemaProblems(issues: readonly z.core.$ZodIssue[]): FieldProblem[] {
  return issues.flatMap((issue): FieldProblem[] => {
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ path: pathOf([...issue.path, key]), message: 'unknown field' }));
    if (issue.code === 'invalid_type') {
      const message = issue.input === undefined ? 'required' : `must be ${EXPECTED[issue.expected] ?? issue.expected}`;
      return [{ path: pathOf(issue.path), message }];
    }
    return [{ path: pathOf(issue.path), message: issue.message }];
  }).map((problem) => ({ ...problem, malformed: true as const }));
}

/** The input as the schema reads it; an AdminError naming `subject` and every malformed field otherwise. */
export function parseWire<S extends z.ZodType>(schema: S, input: unknown, subject: string): z.output<S> {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data;
  const problems = schemaProblems(parsed.error.issues);
  const first = problems[0];
  throw new AdminError('invalid', `${subject}: ${first ? `${formatPath(first.path)} ${first.message}` : 'refused'}`, problems);
}

type Row = Record<string, unknown>;
const rows = (value: unknown, key: string): Row[] => {
  const list = typeof value === 'object' && value !== null ? (value as Row)[key] : undefined;
  return Array.isArray(list) ? list.map((item) => (typeof item === 'object' && item !== null ? (item as Row) : {})) : [];
};

/** Rules across fields and entries, checked on the raw file so they show next to the field errors. */
function crossFieldProblems(raw: unknown): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const duplicate = (list: Row[], key: string, kind: string, normalise: (v: string) => string) => {
    const seen = new Map<string, number>();
    list.forEach((row, i) => {
      const value = row[key];
      if (typeof value !== 'string') return;
      const first = seen.get(normalise(value));
      if (first === undefined) seen.set(normalise(value), i);
      else problems.push({ path: [kind, i, key], message: `duplicate of ${formatPath([kind, first, key])}` });
    });
  };
  duplicate(rows(raw, 'clients'), 'client_id', 'clients', (v) => v);
  // Two spellings of one name (`"ALICE "`, `alice`) are one account, as sign-in finds it.
  duplicate(rows(raw, 'users'), 'username', 'users', canonicalUsername);
  rows(raw, 'users').forEach((user, i) => {
    // The rules of the password change page (NIST SP 800-63B §3.1.1.2) hold for seeded passwords too.
    const { username, password } = user;
    if (password !== undefined && user.password_hash !== undefined) problems.push({ path: ['users', i, 'password_hash'], message: 'give password or password_hash, not both' });
    if (typeof username !== 'string' || username.trim() === '' || typeof password !== 'string' || password === '') return;
    const problem = passwordProblem(password, username);
    if (problem !== undefined) problems.push({ path: ['users', i, 'password'], message: problem });
  });
  return problems;
}

/** The file's content, checked whole: the parsed seed, or every problem found. */
export function checkSeedFile(raw: unknown): { ok: true; seed: SeedFile } | { ok: false; problems: FieldProblem[] } {
  const parsed = seedFileSchema.safeParse(raw, { reportInput: true });
  const problems = [...(parsed.success ? [] : schemaProblems(parsed.error.issues)), ...crossFieldProblems(raw)];
  if (parsed.success && problems.length === 0) return { ok: true, seed: parsed.data };
  return { ok: false, problems };
}

/** The wire names of a client's and a user's fields, as an audit event of a new row names them. */
export const CLIENT_FIELDS: readonly string[] = Object.keys(clientSchema.shape);
export const USER_FIELDS: readonly string[] = Object.keys(userSchema.shape);
