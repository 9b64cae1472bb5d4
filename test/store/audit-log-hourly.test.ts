/**
 * The audit log's counts per hour (the console overview's sign-in chart) on PostgreSQL: one
 * GROUP BY over the type's index, by hour and by the value of one field, within [since, until),
 * with no sequential scan of events among 50,000 events of 25 types.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditLogRepository } from '../../src/store/contracts/audit-log.ts';
import { sqlAuditLog } from '../../src/store/sql/audit-log.ts';
import { expectNoSequentialScan, openPlanDatabase, type PlanDatabase } from '../helpers/query-plans.ts';
import { postgresAvailable } from '../helpers/services.ts';

const HOUR = 3600_000;

describe.runIf(postgresAvailable)('audit log: counts per hour', () => {
  let db: PlanDatabase;
  let log: AuditLogRepository;
  /** A whole hour, three days ago. */
  const hour = new Date(Math.floor(Date.now() / HOUR) * HOUR - 72 * HOUR);

  beforeAll(async () => {
    // 50,000 events of 25 types over 100 days, then the hour's sign-ins: 3 successes, 2 failures, 1 without a result.
    db = await openPlanDatabase([`
      INSERT INTO events (id, type, occurred_at, data)
      SELECT 'evt_' || lpad(i::text, 8, '0'), 'type_' || (i % 25), now() - (i || ' minutes')::interval * 2.88, jsonb_build_object('n', i)
      FROM generate_series(1, 50000) AS i`, { sql: `
      INSERT INTO events (id, type, occurred_at, data) VALUES
        ('evt_h1', 'sign_in', $1::timestamptz, '{"result":"success"}'),
        ('evt_h2', 'sign_in', $1::timestamptz + interval '59 minutes 59.999 seconds', '{"result":"success"}'),
        ('evt_h3', 'sign_in', $1::timestamptz + interval '10 minutes', '{"result":"failure"}'),
        ('evt_h4', 'sign_in', $1::timestamptz + interval '70 minutes', '{"result":"success"}'),
        ('evt_h5', 'sign_in', $1::timestamptz + interval '80 minutes', '{"result":"failure"}'),
        ('evt_h6', 'sign_in', $1::timestamptz + interval '90 minutes', '{}'),
        ('evt_h7', 'sign_in', $1::timestamptz - interval '1 millisecond', '{"result":"throttled"}'),
        ('evt_h8', 'logout', $1::timestamptz + interval '5 minutes', '{"result":"success"}')`, values: [hour] }], ['events']);
    log = sqlAuditLog(db.kysely);
  }, 120_000);

  afterAll(async () => {
    await db?.close();
  });

  it('counts one type\'s events per hour and value of a field, since inclusive and until exclusive', async () => {
    const rows = await log.countPerHour({ type: 'sign_in', field: 'result', since: hour, until: new Date(hour.getTime() + 2 * HOUR) });
    const sorted = rows.map((r) => ({ hour: r.hour.toISOString(), value: r.value, count: r.count }))
      .sort((a, b) => a.hour.localeCompare(b.hour) || String(a.value).localeCompare(String(b.value)));
    const next = new Date(hour.getTime() + HOUR).toISOString();
    expect(sorted).toEqual([
      { hour: hour.toISOString(), value: 'failure', count: 1 },
      { hour: hour.toISOString(), value: 'success', count: 2 },
      { hour: next, value: 'failure', count: 1 },
      { hour: next, value: null, count: 1 },
      { hour: next, value: 'success', count: 1 },
    ]);
  });

  it('reads by the type\'s index: no sequential scan of events', async () => {
    await log.countPerHour({ type: 'sign_in', field: 'result', since: new Date(Date.now() - 24 * HOUR), until: new Date() });
    expectNoSequentialScan(await db.plan(db.lastStatement()), 'events');
  });
});
