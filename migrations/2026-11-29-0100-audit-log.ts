/**
 * The `events` table becomes the audit log as well as the outbox: an event is written there when
 * it is audited (its type not excluded by IDP_AUDIT_LOG_EXCLUDE, IDP_AUDIT_RETENTION above 0) or
 * an enabled webhook endpoint subscribes to it. The log is read newest first a page at a time,
 * filtered by type, user, client and time, and each of these reads is served by an index whose
 * order is the list's (occurred_at, id), so a page costs the same at any depth:
 *
 * - `events_newest` (replacing `events_occurred_at`): the order itself, the time filters, and the purge;
 * - `events_type`, `events_user`, `events_client`: the same order within one type, user or client.
 *
 * The user and the client of an event are generated columns, so that SQL reads them by name as the
 * list does: `user_id` is the event's `user_id`, or the `sub` a change to a user names
 * (`admin_change` of resource `user`); `client_id` is the event's `client_id` (for an
 * `admin_change` by the API, the calling client).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE events
      ADD COLUMN user_id text GENERATED ALWAYS AS (coalesce(data->>'user_id', CASE WHEN data->>'resource' = 'user' THEN data->>'resource_id' END)) STORED,
      ADD COLUMN client_id text GENERATED ALWAYS AS (data->>'client_id') STORED`.execute(db);
  await sql`CREATE INDEX events_newest ON events (occurred_at, id)`.execute(db);
  await sql`DROP INDEX events_occurred_at`.execute(db);
  await sql`CREATE INDEX events_type ON events (type, occurred_at, id)`.execute(db);
  await sql`CREATE INDEX events_user ON events (user_id, occurred_at, id) WHERE user_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX events_client ON events (client_id, occurred_at, id) WHERE client_id IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX events_client`.execute(db);
  await sql`DROP INDEX events_user`.execute(db);
  await sql`DROP INDEX events_type`.execute(db);
  await sql`CREATE INDEX events_occurred_at ON events (occurred_at)`.execute(db);
  await sql`DROP INDEX events_newest`.execute(db);
  await sql`ALTER TABLE events DROP COLUMN client_id, DROP COLUMN user_id`.execute(db);
}
