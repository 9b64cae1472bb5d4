/**
 * Once per vitest run: names the run, so that the migrated template database its suites copy
 * (test/helpers/services.ts) is this run's own, and drops that template when the run ends, so
 * that no run leaves a database behind or depends on one an earlier run left.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_ADMIN_URL, TEMPLATE_PREFIX } from './helpers/services.ts';

export default function setup(): () => Promise<void> {
  const runId = randomBytes(4).toString('hex');
  process.env.IDP_TEST_RUN_ID = runId;
  return async () => {
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    try {
      await admin.connect();
    } catch {
      return; // no PostgreSQL: no template was made
    }
    try {
      const { rows } = await admin.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${TEMPLATE_PREFIX}%\\_${runId}%`]);
      for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  };
}
