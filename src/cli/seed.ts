/**
 * `idp seed FILE.json`: upserts the API scopes, clients and users of a seed file (CONTRACT
 * section 3) in one transaction. Idempotent: what already holds the file's values, including a
 * secret, password or TOTP secret that verifies against what is stored, is left untouched.
 */
import { readFile } from 'node:fs/promises';
import { TOTP_FACTOR_NAME } from '../sessions/mfa.ts';
import { hashPassword, verifyPassword } from '../sources/passwords.ts';
import { totpFactor, type ClientRecord, type DurableStore, type UpsertResult, type UserInput } from '../store/types.ts';
import { hashClientSecret, randomToken, verifyClientSecret } from '../tokens/opaque.ts';
import { deriveKey, open, seal } from '../tokens/secret-box.ts';
import { parseCommand } from './args.ts';
import { RefusedError, type CliContext, type ExitCode } from './context.ts';
import { refuseConstraintViolations } from './database-errors.ts';
import { report } from './output.ts';
import { parseInstant } from './rules.ts';
import { unknownScopeReason, unknownScopes } from './scope-rules.ts';
import { checkSeedFile, type SeedClient, type SeedFile, type SeedUser } from './seed-schema.ts';

type Counts = Record<UpsertResult, number>;
interface SeedSummary {
  clients: Counts;
  users: Counts;
  api_scopes: { created: number; unchanged: number };
}

async function readSeedFile(path: string): Promise<SeedFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new RefusedError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new RefusedError(`${path} is not valid JSON: ${(error as Error).message}; nothing was written`);
  }
  const checked = checkSeedFile(raw);
  if (checked.ok) return checked.seed;
  const details = checked.problems.map((problem) => `${problem.path}: ${problem.message}`);
  throw new RefusedError(`${path} refused: ${checked.problems.length} wrong field(s); nothing was written`, details);
}

/** The secret hash to store: the existing one when the file's secret still verifies against it. */
function clientRecord(client: SeedClient, existing: ClientRecord | undefined): ClientRecord {
  const secret = client.client_secret ?? null;
  const keep = secret !== null && existing?.secretHash != null && verifyClientSecret(secret, existing.secretHash);
  return {
    clientId: client.client_id,
    displayName: client.display_name ?? '',
    enabled: client.enabled ?? true,
    secretHash: secret === null ? null : keep ? (existing?.secretHash ?? null) : hashClientSecret(secret),
    secretExpiresAt: client.secret_expires_at ? (parseInstant(client.secret_expires_at) ?? null) : null,
    grantTypes: [...new Set(client.grant_types ?? ['authorization_code'])] as ClientRecord['grantTypes'],
    scopes: client.scopes ?? [],
    redirectUris: client.redirect_uris ?? [],
    postLogoutRedirectUris: client.post_logout_redirect_uris ?? [],
    corsOrigins: client.cors_origins ?? [],
    accessTokenLifetime: client.access_token_lifetime ?? 3600,
    requireConsent: client.require_consent ?? false,
  };
}

function opensTo(key: Buffer, sealed: string, context: string, expected: string): boolean {
  try {
    return open(key, sealed, context) === expected;
  } catch {
    return false;
  }
}

/** A user to write, whether the seed gives an existing user a new password, and their TOTP secret. */
interface SeedUserInput {
  user: UserInput;
  passwordChanged: boolean;
  /** The sealed secret of the user's 'totp' factor; null for none; 'keep' when the stored one is the file's. */
  totpSecretSealed: string | null | 'keep';
}

/** Hashes and seals one user's secrets (argon2 runs here, never inside the transaction). */
async function userInput(user: SeedUser, durable: DurableStore, totpKey: Buffer): Promise<SeedUserInput> {
  const existing = await durable.users.getByUsername('local', user.username);
  const id = existing?.id ?? randomToken(16);
  const keepPassword = existing?.passwordHash != null && (await verifyPassword(existing.passwordHash, user.password));
  const totp = user.totp_secret ?? null;
  const totpContext = `totp:${id}`;
  const storedTotp = existing && totpFactor(existing)?.secretSealed;
  const keepTotp = totp !== null && storedTotp != null && opensTo(totpKey, storedTotp, totpContext, totp);
  const input: UserInput = {
    id,
    source: 'local',
    subject: existing?.subject ?? id,
    username: user.username,
    passwordHash: keepPassword ? (existing?.passwordHash ?? null) : await hashPassword(user.password),
    givenName: user.given_name ?? null,
    familyName: user.family_name ?? null,
    name: user.name ?? null,
    email: user.email ?? null,
    emailVerified: user.email_verified ?? false,
    phoneNumber: user.phone_number ?? null,
    phoneNumberVerified: user.phone_number_verified ?? false,
    roles: user.roles ?? [],
    locked: user.locked ?? false,
    mustChangePassword: user.must_change_password ?? false,
    mustEnrolMfa: user.must_enrol_mfa ?? false,
  };
  const totpSecretSealed = totp === null ? null : keepTotp ? 'keep' : seal(totpKey, totp, totpContext);
  return { user: input, passwordChanged: existing !== undefined && !keepPassword, totpSecretSealed };
}

/** Makes the user's 'totp' factor the seed's: true when that changed anything. */
async function writeTotp(tx: DurableStore, userId: string, sealed: SeedUserInput['totpSecretSealed']): Promise<boolean> {
  if (sealed === 'keep') return false;
  const stored = (await tx.factors.listForUser(userId)).filter((factor) => factor.kind === 'totp');
  for (const factor of stored) await tx.factors.remove(factor.id);
  if (sealed !== null) await tx.factors.add({ userId, kind: 'totp', name: TOTP_FACTOR_NAME, secretSealed: sealed });
  return stored.length > 0 || sealed !== null;
}

async function writeSeed(tx: DurableStore, scopes: string[], clients: ClientRecord[], users: SeedUserInput[], now: Date): Promise<SeedSummary> {
  const summary: SeedSummary = {
    clients: { created: 0, updated: 0, unchanged: 0 },
    users: { created: 0, updated: 0, unchanged: 0 },
    api_scopes: { created: 0, unchanged: 0 },
  };
  for (const name of scopes) {
    const added = await refuseConstraintViolations(`API scope ${name}`, () => tx.apiScopes.add(name));
    summary.api_scopes[added ? 'created' : 'unchanged'] += 1;
  }
  for (const client of clients) {
    summary.clients[await refuseConstraintViolations(`client ${client.clientId}`, () => tx.clients.upsert(client))] += 1;
  }
  for (const { user, passwordChanged, totpSecretSealed } of users) {
    const result = await refuseConstraintViolations(`user ${user.username}`, () => tx.users.upsert(user));
    const totpChanged = await writeTotp(tx, user.id, totpSecretSealed);
    summary.users[result === 'unchanged' && totpChanged ? 'updated' : result] += 1;
    // ASVS 3.3.3: a new password ends the tokens the old one let anyone obtain.
    if (passwordChanged) await tx.revocations.revokeUser(user.id, 'password changed', now);
  }
  return summary;
}

function summaryLine(summary: SeedSummary): string {
  const counts = (c: Counts) => `${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged`;
  const { api_scopes: scopes } = summary;
  return `clients: ${counts(summary.clients)}; users: ${counts(summary.users)}; api scopes: ${scopes.created} created, ${scopes.unchanged} unchanged`;
}

/** Every client scope must be standard, an API scope of the file, or one the database has. */
async function refuseUnknownScopes(path: string, seed: SeedFile, durable: DurableStore): Promise<void> {
  const details: string[] = [];
  for (const [i, client] of (seed.clients ?? []).entries()) {
    const unknown = await unknownScopes(durable, client.scopes ?? [], seed.api_scopes ?? []);
    for (const scope of unknown) details.push(`clients[${i}].scopes[${client.scopes?.indexOf(scope)}]: ${unknownScopeReason(scope, `list it in api_scopes, or idp scopes add ${scope}`)}`);
  }
  if (details.length > 0) throw new RefusedError(`${path} refused: ${details.length} wrong field(s); nothing was written`, details);
}

export async function runSeed(args: string[], context: CliContext): Promise<ExitCode> {
  const { positionals } = parseCommand({ usage: 'idp seed FILE.json', options: {}, positionals: ['FILE.json'] }, args);
  const path = positionals[0] as string;
  const seed = await readSeedFile(path);
  const durable = await context.openDurable();
  await refuseUnknownScopes(path, seed, durable);
  const clients = await Promise.all((seed.clients ?? []).map(async (c) => clientRecord(c, await durable.clients.get(c.client_id))));
  const totpKey = deriveKey(context.secret, 'totp-secrets');
  const users: SeedUserInput[] = [];
  for (const user of seed.users ?? []) users.push(await userInput(user, durable, totpKey));
  // One transaction: a refused row leaves the database as it was.
  const summary = await durable.transaction((tx) => writeSeed(tx, seed.api_scopes ?? [], clients, users, new Date(context.clock())));
  report(context, summary, () => [summaryLine(summary)]);
  return 0;
}
