/**
 * Webhook claims that cost the same whatever the backlog: pending deliveries indexed by endpoint
 * and due time, so that a claim reads, per enabled endpoint, only the few due deliveries it may
 * take (at most the requests it may have in flight), and the next due time is one index probe
 * per endpoint. The index on due time alone is no longer read, and goes (one index fewer to
 * write per delivery). And one `webhook_due` notification per statement that writes deliveries
 * (a batch of events), rather than one per row folded together at commit.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE state = 'pending'`.execute(db);
  await sql`DROP INDEX webhook_deliveries_pending`.execute(db);
  await sql`DROP TRIGGER webhook_deliveries_notify ON webhook_deliveries`.execute(db);
  await sql`
    CREATE FUNCTION idp_notify_webhooks_due() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM written) THEN
        PERFORM pg_notify('idp_changes', 'webhook_due');
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER webhook_deliveries_notify AFTER INSERT ON webhook_deliveries
    REFERENCING NEW TABLE AS written FOR EACH STATEMENT EXECUTE FUNCTION idp_notify_webhooks_due()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER webhook_deliveries_notify ON webhook_deliveries`.execute(db);
  await sql`DROP FUNCTION idp_notify_webhooks_due()`.execute(db);
  await sql`
    CREATE TRIGGER webhook_deliveries_notify AFTER INSERT ON webhook_deliveries
    FOR EACH ROW EXECUTE FUNCTION idp_notify_webhook_due()`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'`.execute(db);
  await sql`DROP INDEX webhook_deliveries_endpoint_due`.execute(db);
}
