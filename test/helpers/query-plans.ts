/**
 * For the store tests that show an index serves every shape of a query on PostgreSQL: a migrated
 * database filled with many rows, a kysely that keeps the statements the store runs on it, and
 * the plan PostgreSQL makes of one of them.
 */
import { Kysely, PostgresDialect, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { expect } from 'vitest';
import type { Database } from '../../src/store/sql/tables.ts';
import { createMigratedTestDatabase, runSql } from './services.ts';

export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

/** A statement that fills the database, with its parameters. */
export type Fill = string | { sql: string; values: unknown[] };

export interface PlanOptions {
  /** EXPLAIN ANALYZE with BUFFERS: the plan as run, with the blocks it read. */
  analyze?: boolean;
  /** PostgreSQL's plan_cache_mode: the plan of a prepared statement for its parameters, or the generic one. */
  mode?: 'force_custom_plan' | 'force_generic_plan';
}

export interface PlanDatabase {
  url: string;
  /** A kysely on the database that keeps every statement it runs. */
  kysely: Kysely<Database>;
  /** The last statement the kysely ran. */
  lastStatement(): CompiledQuery;
  plan(statement: CompiledQuery, options?: PlanOptions): Promise<PlanNode>;
  close(): Promise<void>;
}

/** A migrated database, filled by `fill` and analysed: the tables' statistics are as a busy service's. */
export async function openPlanDatabase(fill: readonly Fill[], analyse: readonly string[]): Promise<PlanDatabase> {
  const db = await createMigratedTestDatabase();
  for (const statement of fill) {
    if (typeof statement === 'string') await runSql(db.url, statement);
    else await runSql(db.url, statement.sql, statement.values);
  }
  for (const table of analyse) await runSql(db.url, `ANALYZE ${table}`);
  const captured: CompiledQuery[] = [];
  const kysely = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: db.url, max: 1 }) }),
    log: (entry) => void (entry.level === 'query' && captured.push(entry.query)),
  });
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  return {
    url: db.url,
    kysely,
    lastStatement() {
      const statement = captured.at(-1);
      if (!statement) throw new Error('no statement ran');
      return statement;
    },
    async plan(statement, { analyze = false, mode = 'force_custom_plan' } = {}) {
      await client.query(`SET plan_cache_mode = ${mode}`);
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`EXPLAIN (${analyze ? 'ANALYZE, BUFFERS, ' : ''}FORMAT JSON) ${statement.sql}`, [...statement.parameters]);
      const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
      if (!plan) throw new Error('no plan');
      return plan;
    },
    async close() {
      await client.end();
      await kysely.destroy();
      await db.drop();
    },
  };
}

const nodesOf = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];

/** Fails unless the plan reads `table`, and reads it through an index only. */
export function expectNoSequentialScan(plan: PlanNode, table: string, what = ''): void {
  const scans = nodesOf(plan).filter((node) => node['Relation Name'] === table);
  expect(scans.length, what).toBeGreaterThan(0);
  expect(scans.filter((node) => node['Node Type'] === 'Seq Scan'), `${what} ${JSON.stringify(plan)}`).toEqual([]);
}
