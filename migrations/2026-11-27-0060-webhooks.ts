/**
 * Events and webhooks. `events` is the outbox: an event is written there (in the transaction of
 * the change it records, where there is one) only when an enabled endpoint subscribes to its
 * type, with one row in `webhook_deliveries` per such endpoint. Every instance delivers: it
 * claims due deliveries with FOR UPDATE SKIP LOCKED, and each attempt it makes is one row of
 * `webhook_attempts` (the primary key makes an attempt happen once). Each new delivery is announced
 * on `idp_changes` (`webhook_due`) so that a waiting instance starts at once; a change of an
 * endpoint is announced too (`webhooks`), so that every instance knows what is subscribed.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY CHECK (id ~ '^ep_[A-Za-z0-9_-]{1,64}$'),
      url text NOT NULL CHECK (url ~ '^https?://' AND length(url) <= 2000),
      event_types text[] NOT NULL CHECK (cardinality(event_types) BETWEEN 1 AND 100),
      enabled boolean NOT NULL DEFAULT true,
      description text NOT NULL DEFAULT '' CHECK (length(description) <= 500),
      secret_sealed text NOT NULL,
      previous_secret_sealed text,
      previous_secret_expires_at timestamptz,
      disabled_reason text CHECK (disabled_reason IN ('gone', 'failing')),
      failing_since timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT webhook_endpoints_previous_secret_complete
        CHECK ((previous_secret_sealed IS NULL) = (previous_secret_expires_at IS NULL))
    )`.execute(db);
  await sql`
    CREATE TABLE events (
      id text PRIMARY KEY,
      type text NOT NULL,
      occurred_at timestamptz NOT NULL,
      data jsonb NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX events_occurred_at ON events (occurred_at)`.execute(db);
  await sql`
    CREATE TABLE webhook_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      event_id text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      step integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      CONSTRAINT webhook_deliveries_due CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL)),
      UNIQUE (event_id, endpoint_id)
    )`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id)`.execute(db);
  await sql`
    CREATE TABLE webhook_attempts (
      delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempt integer NOT NULL,
      started_at timestamptz NOT NULL,
      duration_ms integer,
      status integer,
      error text,
      PRIMARY KEY (delivery_id, attempt)
    )`.execute(db);

  await sql`
    CREATE FUNCTION idp_notify_webhook_due() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('idp_changes', 'webhook_due');
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER webhook_deliveries_notify AFTER INSERT ON webhook_deliveries
    FOR EACH ROW EXECUTE FUNCTION idp_notify_webhook_due()`.execute(db);
  await sql`
    CREATE FUNCTION idp_notify_webhooks_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('idp_changes', 'webhooks');
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER webhook_endpoints_notify AFTER INSERT OR DELETE OR UPDATE OF event_types, enabled ON webhook_endpoints
    FOR EACH ROW EXECUTE FUNCTION idp_notify_webhooks_change()`.execute(db);
  await sql`
    CREATE TRIGGER webhook_endpoints_notify_truncate AFTER TRUNCATE ON webhook_endpoints
    FOR EACH STATEMENT EXECUTE FUNCTION idp_notify_webhooks_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER webhook_endpoints_notify_truncate ON webhook_endpoints`.execute(db);
  await sql`DROP TABLE webhook_attempts`.execute(db);
  await sql`DROP TABLE webhook_deliveries`.execute(db);
  await sql`DROP TABLE events`.execute(db);
  await sql`DROP TABLE webhook_endpoints`.execute(db);
  await sql`DROP FUNCTION idp_notify_webhooks_change()`.execute(db);
  await sql`DROP FUNCTION idp_notify_webhook_due()`.execute(db);
}
