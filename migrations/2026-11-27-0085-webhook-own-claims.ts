/**
 * An instance that writes its own events (a batch of them, outside a transaction) takes the
 * first attempts of their deliveries as it writes them: those rows are written claimed
 * (`attempts = 1`, under a lease). The `webhook_due` notification is then for the others only,
 * so that no instance is woken to look for deliveries that are being attempted already.
 */
import { sql, type Kysely } from 'kysely';

const notifyWhen = (condition: string) => sql`
  CREATE OR REPLACE FUNCTION idp_notify_webhooks_due() RETURNS trigger
  LANGUAGE plpgsql AS $$
  BEGIN
    IF EXISTS (SELECT 1 FROM written ${sql.raw(condition)}) THEN
      PERFORM pg_notify('idp_changes', 'webhook_due');
    END IF;
    RETURN NULL;
  END
  $$`;

export async function up(db: Kysely<any>): Promise<void> {
  await notifyWhen('WHERE attempts = 0').execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await notifyWhen('').execute(db);
}
