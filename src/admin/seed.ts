/**
 * Applying a seed file (the README's "Seed file" section): its API scopes, clients and users
 * are written in one transaction, so a refused row leaves the database as it was. An entry for a
 * record that exists changes only the fields it names (src/admin/seed-plan.ts). A file that does
 * not fit is refused whole, every wrong field named.
 */
import type { Clock } from '../clock.ts';
import type { DurableStore, UpsertResult } from '../store/types.ts';
import { deriveKey } from '../tokens/secret-box.ts';
import { refuseConstraintViolations } from './database-errors.ts';
import { AdminError, type FieldProblem } from './errors.ts';
import { writeClientChange } from './client-update.ts';
import { planClients, planUsers, type ClientPlan, type UserPlan } from './seed-plan.ts';
import { checkSeedFile, type SeedFile } from './input-schemas.ts';
import { recordedChange, type ChangeActor } from './recorded-change.ts';
import { unknownScopeReason, unknownScopes } from './scopes.ts';
import { writeTotp, writeUserChange } from './user-update.ts';

type Counts = Record<UpsertResult, number>;

export interface SeedSummary {
  kind: 'seeded';
  clients: Counts;
  users: Counts;
  api_scopes: { created: number; unchanged: number };
  records: SeedRecord[];
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

/** One record the seed created or changed, with the names (never the values) of the fields written. */
export interface SeedRecord {
  type: 'client' | 'user';
  id: string;
  result: 'created' | 'updated';
  fields: string[];
}

export function emptySummary(): SeedSummary {
  return {
    kind: 'seeded',
    clients: { created: 0, updated: 0, unchanged: 0 },
    users: { created: 0, updated: 0, unchanged: 0 },
    api_scopes: { created: 0, unchanged: 0 },
    records: [],
  };
}

export async function writeClient(tx: DurableStore, plan: ClientPlan, summary: SeedSummary): Promise<void> {
  if (plan.kind === 'create') {
    const { clientId } = plan.record;
    await refuseConstraintViolations(`client ${clientId}`, () => tx.clients.upsert(plan.record));
    summary.records.push({ type: 'client', id: clientId, result: 'created', fields: plan.fields });
    summary.clients.created += 1;
    return;
  }
  const { change } = plan;
  await refuseConstraintViolations(`client ${change.record.clientId}`, () => writeClientChange(tx, change));
  if (change.changed.length > 0) summary.records.push({ type: 'client', id: change.record.clientId, result: 'updated', fields: change.changed });
  summary.clients[change.changed.length > 0 ? 'updated' : 'unchanged'] += 1;
}

export async function writeUser(tx: DurableStore, plan: UserPlan, summary: SeedSummary, now: Date): Promise<void> {
  if (plan.kind === 'create') {
    const { username, id } = plan.user;
    await refuseConstraintViolations(`user ${username}`, () => tx.users.upsert(plan.user));
    await writeTotp(tx, id, plan.totp);
    summary.records.push({ type: 'user', id: username, result: 'created', fields: plan.fields });
    summary.users.created += 1;
    return;
  }
  const { change } = plan;
  await refuseConstraintViolations(`user ${change.user.username}`, () => writeUserChange(tx, change, now));
  if (change.changed.length > 0) summary.records.push({ type: 'user', id: change.user.username, result: 'updated', fields: change.changed });
  summary.users[change.changed.length > 0 ? 'updated' : 'unchanged'] += 1;
}

async function writeSeed(tx: DurableStore, scopes: string[], clients: ClientPlan[], users: UserPlan[], now: Date): Promise<SeedSummary> {
  const summary = emptySummary();
  for (const name of scopes) {
    const added = await refuseConstraintViolations(`API scope ${name}`, () => tx.apiScopes.add(name));
    summary.api_scopes[added ? 'created' : 'unchanged'] += 1;
  }
  for (const plan of clients) await writeClient(tx, plan, summary);
  for (const plan of users) await writeUser(tx, plan, summary, now);
  return summary;
}

/** The parsed JSON of a seed file as a seed, or an AdminError ('invalid') naming every wrong field. */
export function parseSeed(raw: unknown): SeedFile {
  const checked = checkSeedFile(raw);
  if (!checked.ok) refuseFile(checked.problems);
  return checked.seed;
}

/** The names of the fields written, by section (`clients.redirect_uris`, `api_scopes`), never a value. */
function changedFields({ api_scopes: scopes, records }: SeedSummary): string[] {
  const names = records.flatMap((r) => r.fields.map((field) => `${r.type}s.${field}`));
  return [...(scopes.created > 0 ? ['api_scopes'] : []), ...new Set(names)].sort();
}

/**
 * Applies a seed read from `source` (its path: the event names it); throws AdminError before
 * writing anything when a row is refused. One `admin_change` for the file, in its transaction.
 */
export async function applySeed(deps: SeedDeps, seed: SeedFile, actor: ChangeActor, source: string): Promise<SeedSummary> {
  const { durable } = deps;
  await refuseUnknownScopes(seed, durable);
  const problems: FieldProblem[] = [];
  const clients = await planClients(durable, seed.clients ?? [], problems);
  const users = await planUsers(durable, seed.users ?? [], deriveKey(deps.secret, 'totp-secrets'), problems);
  if (problems.length > 0) refuseFile(problems);
  return recordedChange(deps, actor, `seed file ${source}`, async (tx) => {
    const summary = await writeSeed(tx, seed.api_scopes ?? [], clients, users, new Date(deps.clock()));
    return { result: summary, change: { action: 'seed', resource: 'seed_file', resource_id: source, fields: changedFields(summary) } };
  });
}
