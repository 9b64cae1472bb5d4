/**
 * Applying a seed file (the README's "Seed file" section): its API scopes, clients and users
 * are upserted in one transaction, so a refused row leaves the database as it was. A file that
 * does not fit is refused whole, every wrong field named.
 */
import type { Clock } from '../clock.ts';
import { TOTP_FACTOR_NAME } from '../sessions/mfa.ts';
import type { ClientRecord, DurableStore, UpsertResult } from '../store/types.ts';
import { deriveKey } from '../tokens/secret-box.ts';
import { refuseConstraintViolations } from './database-errors.ts';
import { AdminError, type FieldProblem } from './errors.ts';
import { revokeAfterPasswordChange } from './passwords.ts';
import { seedClientRecord, seedUserInput, type SeedTotp, type SeedUserInput } from './seed-records.ts';
import { checkSeedFile, type SeedFile } from './seed-schema.ts';
import { unknownScopeReason, unknownScopes } from './scopes.ts';

type Counts = Record<UpsertResult, number>;

export interface SeedSummary {
  kind: 'seeded';
  clients: Counts;
  users: Counts;
  api_scopes: { created: number; unchanged: number };
}

export interface SeedDeps {
  durable: DurableStore;
  /** The master secret in force: seals the seeded TOTP secrets. */
  secret: Buffer;
  clock: Clock;
}

function refuseFile(problems: readonly FieldProblem[]): never {
  throw new AdminError('invalid', `${problems.length} wrong field(s); nothing was written`, problems);
}

/** Every client scope must be standard, an API scope of the file, or one the database has. */
async function refuseUnknownScopes(seed: SeedFile, durable: DurableStore): Promise<void> {
  const problems: FieldProblem[] = [];
  for (const [i, client] of (seed.clients ?? []).entries()) {
    const unknown = await unknownScopes(durable, client.scopes ?? [], seed.api_scopes ?? []);
    for (const scope of unknown) {
      problems.push({ path: ['clients', i, 'scopes', client.scopes?.indexOf(scope) ?? 0], message: unknownScopeReason(scope, `list it in api_scopes, or idp scopes add ${scope}`) });
    }
  }
  if (problems.length > 0) refuseFile(problems);
}

/** Makes the user's 'totp' factor what the seed decided: true when that changed anything. */
async function writeTotp(tx: DurableStore, userId: string, totp: SeedTotp): Promise<boolean> {
  if (totp === 'keep') return false;
  const stored = (await tx.factors.listForUser(userId)).filter((factor) => factor.kind === 'totp');
  for (const factor of stored) await tx.factors.remove(factor.id);
  if (totp !== null) await tx.factors.add({ userId, kind: 'totp', name: TOTP_FACTOR_NAME, secretSealed: totp });
  return stored.length > 0 || totp !== null;
}

async function writeSeed(tx: DurableStore, scopes: string[], clients: ClientRecord[], users: SeedUserInput[], now: Date): Promise<SeedSummary> {
  const summary: SeedSummary = {
    kind: 'seeded',
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
  for (const { user, passwordChanged, totp } of users) {
    const result = await refuseConstraintViolations(`user ${user.username}`, () => tx.users.upsert(user));
    const totpChanged = await writeTotp(tx, user.id, totp);
    summary.users[result === 'unchanged' && totpChanged ? 'updated' : result] += 1;
    if (passwordChanged) await revokeAfterPasswordChange((id, reason) => tx.revocations.revokeUser(id, reason, now), user.id);
  }
  return summary;
}

/** The parsed JSON of a seed file as a seed, or an AdminError ('invalid') naming every wrong field. */
export function parseSeed(raw: unknown): SeedFile {
  const checked = checkSeedFile(raw);
  if (!checked.ok) refuseFile(checked.problems);
  return checked.seed;
}

/** Applies a seed; throws AdminError before writing anything when a row is refused. */
export async function applySeed(deps: SeedDeps, seed: SeedFile): Promise<SeedSummary> {
  const { durable } = deps;
  await refuseUnknownScopes(seed, durable);
  const clients = await Promise.all((seed.clients ?? []).map(async (c) => seedClientRecord(c, await durable.clients.get(c.client_id))));
  const totpKey = deriveKey(deps.secret, 'totp-secrets');
  const users: SeedUserInput[] = [];
  for (const user of seed.users ?? []) users.push(await seedUserInput(user, durable, totpKey));
  return durable.transaction((tx) => writeSeed(tx, seed.api_scopes ?? [], clients, users, new Date(deps.clock())));
}
