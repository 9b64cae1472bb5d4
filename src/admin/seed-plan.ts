/**
 * What a seed file will do to each of its clients and users, decided before anything is written:
 * an entry for a record that does not exist creates it (what it leaves out takes the defaults),
 * an entry for one that exists is a patch (what it leaves out is kept, `null` clears). Every
 * refusal is collected with its path in the file, so a refused file names them all.
 */
import type { ClientRecord, UserInput, UserRecord } from '../store/records.ts';
import type { DurableStore } from '../store/types.ts';
import { applyClientPatch, type ClientChange } from './client-update.ts';
import { refuseClientProblems } from './clients.ts';
import { AdminError, type FieldPath, type FieldProblem } from './errors.ts';
import { canonicalUsername } from './rules.ts';
import { seedClientRecord, seedUserInput, type SeedTotp } from './seed-records.ts';
import type { SeedClient, SeedUser } from './input-schemas.ts';
import { passwordOrHashProblem } from './user-fields.ts';
import { prepareUserChange, type UserChange } from './user-update.ts';

export type ClientPlan = { kind: 'create'; record: ClientRecord; fields: string[] } | { kind: 'update'; change: ClientChange };
export type UserPlan = { kind: 'create'; user: UserInput; totp: SeedTotp; fields: string[] } | { kind: 'update'; change: UserChange };

/** The problems of an AdminError raised for one entry, named by their path in the file; other errors pass. */
async function collect<T>(at: FieldPath, problems: FieldProblem[], plan: () => Promise<T>): Promise<T | undefined> {
  try {
    return await plan();
  } catch (error) {
    if (!(error instanceof AdminError) || error.problems.length === 0) throw error;
    problems.push(...error.problems.map((p) => ({ path: [...at, ...p.path], message: p.message })));
    return undefined;
  }
}

const givenFields = (entry: object, key: string): string[] => Object.keys(entry).filter((field) => field !== key);

export async function planClient(durable: DurableStore, entry: SeedClient): Promise<ClientPlan> {
  const existing = await durable.clients.get(entry.client_id);
  if (existing) return { kind: 'update', change: applyClientPatch(existing, entry) };
  const record = seedClientRecord(entry);
  refuseClientProblems({ ...record, public: record.secretHash === null });
  return { kind: 'create', record, fields: givenFields(entry, 'client_id') };
}

/** The plan of each entry of a section, in order; an entry refused adds its problems instead. */
async function planEach<E, P>(section: 'clients' | 'users', entries: readonly E[], problems: FieldProblem[], planOne: (entry: E) => Promise<P>): Promise<P[]> {
  const plans: P[] = [];
  for (const [i, entry] of entries.entries()) {
    const plan = await collect([section, i], problems, () => planOne(entry));
    if (plan) plans.push(plan);
  }
  return plans;
}

export function planClients(durable: DurableStore, entries: readonly SeedClient[], problems: FieldProblem[]): Promise<ClientPlan[]> {
  return planEach('clients', entries, problems, (entry) => planClient(durable, entry));
}

async function planUser(durable: DurableStore, entry: SeedUser, totpKey: Buffer): Promise<UserPlan> {
  return planUserAgainst(await durable.users.getByUsername('local', canonicalUsername(entry.username)), entry, totpKey);
}

/**
 * What one entry does to its user, `existing` being the stored one found by its name; a new
 * user takes `subject` as `sub` when given (an import keeps the one another provider gave).
 */
export async function planUserAgainst(existing: UserRecord | undefined, entry: SeedUser, totpKey: Buffer, subject?: string): Promise<UserPlan> {
  if (existing) return { kind: 'update', change: await prepareUserChange(existing, entry, totpKey) };
  const problem = passwordOrHashProblem(entry, entry.username, true);
  if (problem) throw new AdminError('invalid', `user ${entry.username} refused`, [problem]);
  return { kind: 'create', ...(await seedUserInput(entry, totpKey, subject)), fields: givenFields(entry, 'username') };
}

/** argon2 runs here, outside the transaction that writes the plans. */
export function planUsers(durable: DurableStore, entries: readonly SeedUser[], totpKey: Buffer, problems: FieldProblem[]): Promise<UserPlan[]> {
  return planEach('users', entries, problems, (entry) => planUser(durable, entry, totpKey));
}
