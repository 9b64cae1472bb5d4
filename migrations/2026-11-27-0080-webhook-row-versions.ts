/**
 * Row versions of webhook endpoints, as migration 2026-11-27-0010 gave clients, users and API
 * scopes: `version` takes a new value of the shared sequence on every INSERT and UPDATE, whoever
 * writes (the API, `idp webhooks`, SQL, or the delivery worker when it disables an endpoint or
 * marks it failing), so that the administration API's ETag and If-Match notice any change.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_endpoints ADD COLUMN version bigint NOT NULL DEFAULT nextval('idp_row_versions')`.execute(db);
  await sql`
    CREATE TRIGGER webhook_endpoints_next_version BEFORE UPDATE ON webhook_endpoints
    FOR EACH ROW EXECUTE FUNCTION idp_next_row_version()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER webhook_endpoints_next_version ON webhook_endpoints`.execute(db);
  await sql`ALTER TABLE webhook_endpoints DROP COLUMN version`.execute(db);
}
