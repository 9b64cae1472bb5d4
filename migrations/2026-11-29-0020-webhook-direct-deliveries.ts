/**
 * A delivery made for one endpoint alone (`POST /webhooks/{id}/test`) is `direct`: it goes out
 * whether the endpoint is enabled or not, so that an operator can check a receiver before
 * enabling it. Every other delivery waits while its endpoint is disabled. The partial index
 * finds the few direct ones due without reading a disabled endpoint's backlog.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_deliveries ADD COLUMN direct boolean NOT NULL DEFAULT false`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_direct_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending' AND direct`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_deliveries DROP COLUMN direct`.execute(db);
}
