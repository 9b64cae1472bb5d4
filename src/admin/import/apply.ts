/**
 * Importing a file's entries through the seed's operations (src/admin/seed-plan.ts plans each
 * record, src/admin/seed.ts writes it), record by record: a refused record refuses nothing
 * else. Entries are checked and planned in batches and each batch written in one transaction
 * (if one write of it fails, its records are written one by one, so only that one is refused).
 * A batch at a time is held, so memory stays flat however large the file.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { DurableStore } from '../../store/types.ts';
import { deriveKey } from '../../tokens/secret-box.ts';
import { AdminError, type FieldProblem } from '../errors.ts';
import { canonicalUsername } from '../rules.ts';
import { planClient, planUserAgainst, type ClientPlan, type UserPlan } from '../seed-plan.ts';
import { apiScopeName, clientSchema, schemaProblems, userSchema } from '../input-schemas.ts';
import { emptySummary, writeClient, writeUser } from '../seed.ts';
import type { UserRecord } from '../../store/records.ts';
import { writeTotp } from '../user-update.ts';
import { unknownScopeReason, unknownScopes } from '../scopes.ts';
import { fieldPointer, pointerOf, type ImportEntry } from './entries.ts';
import { retrying } from './retry.ts';

export interface ImportDeps {
  durable: DurableStore;
  /** The master secret in force: seals imported TOTP secrets. */
  secret: Buffer;
  clock: Clock;
}

export type RecordType = 'user' | 'client' | 'api_scope';

/** What the import did (or, in a dry run, would do) to one record. */
export type ImportResult =
  | { type: RecordType; record: string; at: string; result: 'created' | 'updated'; fields: string[]; notes: string[] }
  | { type: RecordType; record: string; at: string; result: 'skipped'; reason: string; notes: string[] }
  | { type: RecordType; record: string; at: string; result: 'refused'; problems: Array<{ field: string; message: string }> };

export type Counts = Record<'created' | 'updated' | 'skipped' | 'refused', number>;
export interface ImportCounts { users: Counts; clients: Counts; api_scopes: Counts }

export interface ImportOptions {
  dryRun: boolean;
  /** Records checked, planned and written together (one transaction). */
  batchSize?: number;
  /** Told of every record as its batch is done, in file order. */
  onResult?: (result: ImportResult) => void;
}

type Plan = { entry: ImportEntry; plan: { kind: 'user'; value: UserPlan } | { kind: 'client'; value: ClientPlan } };

const SECTION: Record<RecordType, keyof ImportCounts> = { user: 'users', client: 'clients', api_scope: 'api_scopes' };
const zero = (): Counts => ({ created: 0, updated: 0, skipped: 0, refused: 0 });

function refusal(entry: ImportEntry, type: RecordType, problems: Array<{ field: string; message: string }>): ImportResult {
  return { type, record: entry.name, at: entry.at, result: 'refused', problems };
}

/** The seed's field problems, as pointers into the provider's record. */
const problemsOf = (entry: ImportEntry, problems: readonly FieldProblem[]) => problems.map((p) => ({ field: fieldPointer(entry, p.path), message: p.message }));

/** What a plan will do: created, updated with these fields, or nothing to change. */
function outcome(entry: ImportEntry, type: RecordType, plan: UserPlan | ClientPlan): ImportResult {
  const base = { type, record: entry.name, at: entry.at, notes: entry.notes };
  if (plan.kind === 'create') return { ...base, result: 'created', fields: plan.fields };
  const { changed } = plan.change;
  return changed.length > 0 ? { ...base, result: 'updated', fields: changed } : { ...base, result: 'skipped', reason: 'unchanged' };
}

export async function importEntries(deps: ImportDeps, entries: AsyncIterable<ImportEntry>, options: ImportOptions): Promise<ImportCounts> {
  const counts: ImportCounts = { users: zero(), clients: zero(), api_scopes: zero() };
  const state = { deps, options, totpKey: deriveKey(deps.secret, 'totp-secrets'), seen: new Set<string>(), scopes: [] as string[] };
  const tell = (result: ImportResult) => {
    counts[SECTION[result.type]][result.result] += 1;
    options.onResult?.(result);
  };
  // Two batches in flight: one written while the next is read and planned (the database's time
  // and the parsing's overlap). A write that fails stops the import at the next batch.
  let writing: Promise<void> = Promise.resolve();
  const next = async (batch: readonly ImportEntry[]) => {
    const planned = await planBatch(state, batch);
    await writing;
    writing = writePlanned(state, planned).then((results) => results.forEach(tell));
    writing.catch(() => {});
  };
  let batch: ImportEntry[] = [];
  for await (const entry of entries) {
    batch.push(entry);
    if (batch.length < (options.batchSize ?? 200)) continue;
    await next(batch);
    batch = [];
  }
  await next(batch);
  await writing;
  return counts;
}

type State = { deps: ImportDeps; options: ImportOptions; totpKey: Buffer; seen: Set<string>; scopes: string[] };

/** The stored users the batch's user entries name, by canonical name: one statement for the batch. */
async function storedUsers(state: State, batch: readonly ImportEntry[]): Promise<Map<string, UserRecord>> {
  const names = batch.flatMap((entry) => (entry.type === 'user' && typeof entry.user.username === 'string' ? [canonicalUsername(entry.user.username)] : []));
  const found = await retrying(() => state.deps.durable.users.getManyByUsername('local', [...new Set(names)]));
  return new Map(found.map((user) => [user.username, user]));
}

interface PlannedBatch {
  /** Each entry's result, in order: a planned one's as it will be once written. */
  results: ImportResult[];
  plans: Array<Plan & { index: number }>;
}

async function planBatch(state: State, batch: readonly ImportEntry[]): Promise<PlannedBatch> {
  const results: ImportResult[] = [];
  const plans: Array<Plan & { index: number }> = [];
  const stored = await storedUsers(state, batch);
  for (const entry of batch) {
    const planned = await planEntry(state, entry, stored);
    if ('result' in planned) results.push(planned);
    else {
      plans.push({ ...planned, index: results.length });
      results.push(outcome(entry, planned.plan.kind, planned.plan.value));
    }
  }
  return { results, plans };
}

async function writePlanned(state: State, { results, plans }: PlannedBatch): Promise<ImportResult[]> {
  if (state.options.dryRun || plans.length === 0) return results;
  const now = new Date(state.deps.clock());
  const write = (tx: DurableStore, { plan }: Plan) => (plan.kind === 'user' ? writeUser(tx, plan.value, emptySummary(), now) : writeClient(tx, plan.value, emptySummary()));
  try {
    await retrying(() => state.deps.durable.transaction((tx) => writeBatch(tx, plans, write)));
  } catch {
    // One write failed and took its batch with it: each on its own, so only that one is refused.
    for (const plan of plans) {
      try {
        await retrying(() => state.deps.durable.transaction((tx) => write(tx, plan)));
      } catch (error) {
        if (!(error instanceof AdminError)) throw error;
        const problems = error.problems.length > 0 ? problemsOf(plan.entry, error.problems) : [{ field: '', message: error.message }];
        results[plan.index] = refusal(plan.entry, plan.plan.kind, problems);
      }
    }
  }
  return results;
}

/**
 * A batch's new users in one statement (what makes a large import fast), then the rest: each
 * new user's authenticator app, each change, each client, through the seed's writes.
 */
async function writeBatch(tx: DurableStore, plans: readonly Plan[], write: (tx: DurableStore, plan: Plan) => Promise<void>): Promise<void> {
  const created = plans.flatMap(({ plan }) => (plan.kind === 'user' && plan.value.kind === 'create' ? [plan.value] : []));
  await tx.users.insertMany(created.map((plan) => plan.user));
  for (const plan of created) if (plan.totp !== null) await writeTotp(tx, plan.user.id, plan.totp);
  for (const plan of plans) if (plan.plan.kind !== 'user' || plan.plan.value.kind !== 'create') await write(tx, plan);
}

/** The plan of one entry, or its result when there is nothing to write (skipped, refused, an API scope). */
async function planEntry(state: State, entry: ImportEntry, stored: Map<string, UserRecord>): Promise<Plan | ImportResult> {
  if (entry.type === 'skip') return { type: entry.kind, record: entry.name, at: entry.at, result: 'skipped', reason: entry.reason, notes: [] };
  if (entry.type === 'api_scope') return importApiScope(state, entry);
  if (entry.problems.length > 0) return refusal(entry, entry.type, entry.problems);
  try {
    if (entry.type === 'user') return { entry, plan: { kind: 'user', value: await planUserEntry(state, entry, stored) } };
    return { entry, plan: { kind: 'client', value: await planClientEntry(state, entry) } };
  } catch (error) {
    if (!(error instanceof AdminError)) throw error;
    return refusal(entry, entry.type, error.problems.length > 0 ? problemsOf(entry, error.problems) : [{ field: '', message: error.message }]);
  }
}

function refuseFields(name: string, problems: FieldProblem[]): void {
  if (problems.length > 0) throw new AdminError('invalid', `${name} refused`, problems);
}

/** A record named twice in one file is refused the second time: which one holds is not a guess to make. */
function refuseRepeat(state: State, key: string, field: string): void {
  // Kept as a digest: a name parsed from the file may be a slice of the text read, and keeping
  // it would keep that whole chunk of the file in memory (100,000 users held 85 MB so).
  const digest = createHash('sha256').update(key).digest('base64');
  if (state.seen.has(digest)) throw new AdminError('invalid', 'repeated', [{ path: [field], message: 'repeats a record earlier in the file' }]);
  state.seen.add(digest);
}

async function planUserEntry(state: State, entry: ImportEntry & { type: 'user' }, stored: Map<string, UserRecord>): Promise<UserPlan> {
  const parsed = userSchema.safeParse(entry.user, { reportInput: true });
  if (!parsed.success) refuseFields(entry.name, schemaProblems(parsed.error.issues));
  const user = parsed.data as NonNullable<typeof parsed.data>;
  const name = canonicalUsername(user.username);
  refuseRepeat(state, `user ${name}`, 'username');
  if (entry.subject !== undefined) refuseRepeat(state, `sub ${entry.subject}`, 'sub');
  return planUserAgainst(stored.get(name), user, state.totpKey, entry.subject);
}

async function planClientEntry(state: State, entry: ImportEntry & { type: 'client' }): Promise<ClientPlan> {
  const parsed = clientSchema.safeParse(entry.client, { reportInput: true });
  if (!parsed.success) refuseFields(entry.name, schemaProblems(parsed.error.issues));
  const client = parsed.data as NonNullable<typeof parsed.data>;
  refuseRepeat(state, `client ${client.client_id}`, 'client_id');
  const unknown = await unknownScopes(state.deps.durable, client.scopes ?? [], state.scopes);
  refuseFields(client.client_id, unknown.map((scope) => ({ path: ['scopes', client.scopes?.indexOf(scope) ?? 0], message: unknownScopeReason(scope, 'list it in api_scopes first') })));
  return planClient(state.deps.durable, client);
}

async function importApiScope(state: State, entry: ImportEntry & { type: 'api_scope' }): Promise<ImportResult> {
  const parsed = apiScopeName.safeParse(entry.scope);
  if (!parsed.success) return refusal(entry, 'api_scope', schemaProblems(parsed.error.issues).map((p) => ({ field: pointerOf(p.path), message: p.message })));
  const name = parsed.data;
  const exists = state.scopes.includes(name) || (await state.deps.durable.apiScopes.list()).includes(name);
  state.scopes.push(name);
  if (exists) return { type: 'api_scope', record: name, at: entry.at, result: 'skipped', reason: 'unchanged', notes: [] };
  if (!state.options.dryRun) await state.deps.durable.apiScopes.add(name);
  return { type: 'api_scope', record: name, at: entry.at, result: 'created', fields: [], notes: [] };
}
