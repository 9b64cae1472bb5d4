/**
 * Every query shape of the users list, on PostgreSQL with 100,000 users, is served by an index:
 * EXPLAIN shows no sequential scan of `users` (for the prepared statements, in their generic plan
 * too), and a deep page reads about as many buffers as the first one.
 */
import type { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlUsers } from '../../src/store/sql/users.ts';
import type { UserRecord } from '../../src/store/records.ts';
import type { UserPageRequest, UserRepository } from '../../src/store/types.ts';
import { expectNoSequentialScan, openPlanDatabase, type PlanDatabase, type PlanNode } from '../helpers/query-plans.ts';
import { postgresAvailable } from '../helpers/services.ts';

const USERS = 100_000;
const FIRST_NAMES = ['Alice', 'Bob', 'Carol', 'Dave', 'Eve', 'Frank', 'Grace', 'Heidi', 'Ivan', 'Judy'];

describe.runIf(postgresAvailable)('users list: every query shape served by an index (100,000 users)', () => {
  let db: PlanDatabase;
  let users: UserRepository;

  beforeAll(async () => {
    db = await openPlanDatabase([`
      INSERT INTO users (id, subject, username, given_name, family_name, email)
      SELECT md5(i::text), md5(i::text), 'user' || lpad(i::text, 6, '0'),
        (ARRAY[${FIRST_NAMES.map((n) => `'${n}'`).join(',')}])[1 + i % 10], 'Family' || (i % 1000),
        'user' || lpad(i::text, 6, '0') || '@example.com'
      FROM generate_series(1, ${USERS}) AS i`], ['users']);
    users = sqlUsers(db.kysely);
  }, 120_000);

  afterAll(async () => {
    await db?.close();
  });

  /** Whether a user is one the request asks for (the data are ASCII: lower-casing agrees with the database's). */
  function matches(user: UserRecord, request: UserPageRequest): boolean {
    const lower = (value: string | null) => (value ?? '').toLowerCase();
    const q = request.q?.toLowerCase();
    return (request.username === undefined || lower(user.username) === request.username.toLowerCase())
      && (request.email === undefined || lower(user.email) === request.email.toLowerCase())
      && (q === undefined || [user.username, user.email, user.givenName, user.familyName].some((value) => lower(value).startsWith(q)))
      && (request.after === undefined || lower(user.username) > request.after.name || (lower(user.username) === request.after.name && user.id > request.after.id));
  }

  /** The statement the store runs for `request`, and how many users it found: the right ones, in username order. */
  async function statementOf(request: UserPageRequest): Promise<{ query: CompiledQuery; found: number }> {
    const rows = await users.page(request);
    const query = db.lastStatement();
    const names = rows.map((row) => row.user.username);
    expect(names).toEqual([...names].sort());
    expect(rows.filter((row) => !matches(row.user, request)).map((row) => row.user.username)).toEqual([]);
    return { query, found: rows.length };
  }

  const blocks = (plan: PlanNode) => (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
  const deep = { name: 'user099000', id: '' };

  const shapes: Array<{ name: string; request: UserPageRequest; found: number; generic: boolean }> = [
    { name: 'username order, first page', request: { after: undefined, limit: 51 }, found: 51, generic: true },
    { name: 'username order, deep page (cursor)', request: { after: deep, limit: 51 }, found: 51, generic: true },
    { name: 'exact username', request: { after: undefined, limit: 51, username: 'USER050000' }, found: 1, generic: true },
    { name: 'exact email', request: { after: undefined, limit: 51, email: 'User050000@Example.com' }, found: 1, generic: true },
    { name: 'exact email, with cursor', request: { after: { name: 'user049999', id: '' }, limit: 51, email: 'user050000@example.com' }, found: 1, generic: true },
    { name: 'q matching every username, first page', request: { after: undefined, limit: 51, q: 'user' }, found: 51, generic: false },
    { name: 'q matching every username, deep page (cursor)', request: { after: deep, limit: 51, q: 'USER' }, found: 51, generic: false },
    { name: 'q matching a family name', request: { after: undefined, limit: 51, q: 'family12' }, found: 51, generic: false },
    { name: 'q matching a family name, deep page (cursor)', request: { after: { name: 'user090000', id: '' }, limit: 51, q: 'family12' }, found: 51, generic: false },
    { name: 'q matching a given name, deep page (cursor)', request: { after: deep, limit: 51, q: 'gra' }, found: 51, generic: false },
    { name: 'q matching one email', request: { after: undefined, limit: 51, q: 'user012345@' }, found: 1, generic: false },
    { name: 'q matching nothing', request: { after: undefined, limit: 51, q: 'zzz' }, found: 0, generic: false },
  ];

  it.each(shapes)('$name: no sequential scan of users', async ({ request, found, generic }) => {
    const statement = await statementOf(request);
    expect(statement.found).toBe(found);
    for (const mode of generic ? (['force_custom_plan', 'force_generic_plan'] as const) : (['force_custom_plan'] as const)) {
      expectNoSequentialScan(await db.plan(statement.query, { analyze: true, mode }), 'users', mode);
    }
  });

  it('reads about as much for a deep page as for the first, searched or not', async () => {
    const cost = async (request: UserPageRequest) => blocks(await db.plan((await statementOf(request)).query, { analyze: true }));
    const pairs: Array<[UserPageRequest, UserPageRequest]> = [
      [{ after: undefined, limit: 50 }, { after: deep, limit: 50 }],
      [{ after: undefined, limit: 50, q: 'user' }, { after: deep, limit: 50, q: 'user' }],
      [{ after: undefined, limit: 50, q: 'family12' }, { after: { name: 'user090000', id: '' }, limit: 50, q: 'family12' }],
    ];
    for (const [first, later] of pairs) {
      const [a, b] = [await cost(first), await cost(later)];
      // A page reads a few hundred blocks at most, wherever it is (all 100,000 rows are over 2,000).
      expect({ q: first.q, first: a, later: b }).toEqual({ q: first.q, first: expect.any(Number), later: expect.any(Number) });
      expect(Math.max(a, b), `q=${first.q}: ${a} then ${b} blocks`).toBeLessThan(1000);
      expect(b / a, `q=${first.q}: ${a} then ${b} blocks`).toBeLessThan(3);
    }
  });
});
