/**
 * Initial schema. Frozen: change the schema with a new migration, never by editing this one.
 * The `clients` table is part of the operational contract (README, Editing clients with SQL): administrators
 * edit it with SQL, so its rules are database constraints, not application checks.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Immutable helper functions so that CHECK constraints can look inside arrays.
  await sql`
    CREATE FUNCTION idp_is_redirect_uri(uri text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      -- RFC 6749 3.1.2: absolute URI, no fragment; no whitespace or control characters.
      SELECT uri ~ '^[A-Za-z][A-Za-z0-9+.-]*:[^#[:space:][:cntrl:]]+$'
         AND (uri !~* '^https?:' OR uri ~* '^https?://[^/?#@[:space:]]+(/[^#]*)?$')
    $$`.execute(db);
  await sql`
    CREATE FUNCTION idp_all_redirect_uris(uris text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT coalesce(bool_and(idp_is_redirect_uri(u)), true) FROM unnest(uris) AS u
    $$`.execute(db);
  await sql`
    CREATE FUNCTION idp_all_origins(origins text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      -- An origin is scheme://host[:port]: no path, no trailing slash.
      SELECT coalesce(bool_and(o ~ '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$' OR o ~ '^https?://\\[[0-9A-Fa-f:.]+\\](:[0-9]{1,5})?$'), true)
      FROM unnest(origins) AS o
    $$`.execute(db);
  await sql`
    CREATE FUNCTION idp_all_scope_tokens(scopes text[]) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      -- RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
      SELECT coalesce(bool_and(s ~ '^[!#-\\[\\]-~]+$'), true) FROM unnest(scopes) AS s
    $$`.execute(db);

  await sql`
    CREATE TABLE clients (
      client_id text PRIMARY KEY
        CONSTRAINT clients_client_id_format CHECK (client_id ~ '^[!-~]{1,200}$'),
      display_name text NOT NULL DEFAULT '',
      enabled boolean NOT NULL DEFAULT true,
      secret_hash text
        CONSTRAINT clients_secret_hash_format CHECK (secret_hash ~ '^sha256\\$[A-Za-z0-9_-]{22}\\$[A-Za-z0-9_-]{43}$'),
      secret_expires_at timestamptz,
      grant_types text[] NOT NULL DEFAULT '{authorization_code}'
        CONSTRAINT clients_grant_types_known
          CHECK (grant_types <@ ARRAY['authorization_code', 'refresh_token', 'client_credentials']::text[]
                 AND array_position(grant_types, NULL) IS NULL),
      scopes text[] NOT NULL DEFAULT '{}'
        CONSTRAINT clients_scopes_format CHECK (idp_all_scope_tokens(scopes)),
      redirect_uris text[] NOT NULL DEFAULT '{}'
        CONSTRAINT clients_redirect_uris_format CHECK (idp_all_redirect_uris(redirect_uris)),
      post_logout_redirect_uris text[] NOT NULL DEFAULT '{}'
        CONSTRAINT clients_post_logout_redirect_uris_format CHECK (idp_all_redirect_uris(post_logout_redirect_uris)),
      cors_origins text[] NOT NULL DEFAULT '{}'
        CONSTRAINT clients_cors_origins_format CHECK (idp_all_origins(cors_origins)),
      access_token_lifetime integer NOT NULL DEFAULT 3600
        CONSTRAINT clients_access_token_lifetime_positive CHECK (access_token_lifetime > 0),
      require_consent boolean NOT NULL DEFAULT false,
      -- RFC 6749 4.4: the client credentials grant is for confidential clients only.
      CONSTRAINT clients_client_credentials_confidential
        CHECK (secret_hash IS NOT NULL OR NOT ('client_credentials' = ANY (grant_types)))
    )`.execute(db);

  // Every instance drops its cached copy of a client when this fires (LISTEN idp_changes).
  await sql`
    CREATE FUNCTION idp_notify_client_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify('idp_changes', 'clients');
        RETURN NULL;
      END IF;
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM pg_notify('idp_changes', 'client:' || OLD.client_id);
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM pg_notify('idp_changes', 'client:' || NEW.client_id);
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER clients_notify_change AFTER INSERT OR UPDATE OR DELETE ON clients
    FOR EACH ROW EXECUTE FUNCTION idp_notify_client_change()`.execute(db);
  await sql`
    CREATE TRIGGER clients_notify_truncate AFTER TRUNCATE ON clients
    FOR EACH STATEMENT EXECUTE FUNCTION idp_notify_client_change()`.execute(db);

  await sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      source text NOT NULL DEFAULT 'local' CONSTRAINT users_source_known CHECK (source IN ('local', 'ldap', 'oidc')),
      subject text NOT NULL CONSTRAINT users_subject_not_empty CHECK (subject <> ''),
      username text NOT NULL CONSTRAINT users_username_not_empty CHECK (username <> ''),
      password_hash text,
      given_name text,
      family_name text,
      name text,
      email text,
      email_verified boolean NOT NULL DEFAULT false,
      phone_number text,
      phone_number_verified boolean NOT NULL DEFAULT false,
      roles text[] NOT NULL DEFAULT '{}',
      totp_secret_sealed text,
      locked boolean NOT NULL DEFAULT false,
      must_change_password boolean NOT NULL DEFAULT false,
      must_enrol_mfa boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT users_source_subject_unique UNIQUE (source, subject)
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX users_source_username_unique ON users (source, lower(username))`.execute(db);

  await sql`
    CREATE TABLE api_scopes (
      name text PRIMARY KEY CONSTRAINT api_scopes_name_format CHECK (name ~ '^[!#-\\[\\]-~]+$'),
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);

  await sql`
    CREATE TABLE consents (
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      client_id text NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE ON UPDATE CASCADE,
      scopes text[] NOT NULL,
      granted_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (user_id, client_id)
    )`.execute(db);

  await sql`
    CREATE TABLE signing_keys (
      kid text PRIMARY KEY,
      alg text NOT NULL DEFAULT 'RS256' CONSTRAINT signing_keys_alg_known CHECK (alg = 'RS256'),
      state text NOT NULL CONSTRAINT signing_keys_state_known CHECK (state IN ('next', 'current', 'previous', 'retired')),
      public_jwk jsonb NOT NULL,
      private_jwk_sealed text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      activated_at timestamptz,
      retired_at timestamptz
    )`.execute(db);
  // At most one key signs at a time.
  await sql`CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (state) WHERE state = 'current'`.execute(db);
  await sql`
    CREATE FUNCTION idp_notify_keys_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('idp_changes', 'keys');
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE TRIGGER signing_keys_notify_change AFTER INSERT OR UPDATE OR DELETE ON signing_keys
    FOR EACH STATEMENT EXECUTE FUNCTION idp_notify_keys_change()`.execute(db);

  // One family per authorization: every refresh token minted from one code exchange.
  await sql`
    CREATE TABLE refresh_token_families (
      id text PRIMARY KEY,
      client_id text NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE ON UPDATE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      scopes text[] NOT NULL,
      claims jsonb,
      allowed_scopes text[] NOT NULL DEFAULT '{}',
      nonce text,
      auth_time timestamptz NOT NULL,
      amr text[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      revoked_reason text
    )`.execute(db);
  await sql`CREATE INDEX refresh_token_families_user_client ON refresh_token_families (user_id, client_id)`.execute(db);
  await sql`
    CREATE TABLE refresh_tokens (
      token_hash text PRIMARY KEY,
      family_id text NOT NULL REFERENCES refresh_token_families (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      rotated_at timestamptz,
      successor_hash text,
      -- The response that rotated this token, sealed with a key derived from this token itself:
      -- a retry inside the grace window gets it again; a database reader cannot open it.
      successor_sealed text,
      -- The access token issued together with this refresh token, revoked with the family.
      access_jti text NOT NULL,
      access_expires_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id)`.execute(db);

  // Access tokens issued without a refresh token (those with one are in refresh_tokens), so
  // that end session can revoke a client's tokens for a user.
  await sql`
    CREATE TABLE issued_access_tokens (
      jti text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      client_id text NOT NULL REFERENCES clients (client_id) ON DELETE CASCADE ON UPDATE CASCADE,
      expires_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX issued_access_tokens_user_client ON issued_access_tokens (user_id, client_id)`.execute(db);

  // Access tokens revoked before their expiry, by `jti`; kept until they would have expired.
  await sql`
    CREATE TABLE revocations (
      jti text PRIMARY KEY,
      client_id text NOT NULL,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`CREATE INDEX revocations_expires_at ON revocations (expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['revocations', 'issued_access_tokens', 'refresh_tokens', 'refresh_token_families', 'signing_keys', 'consents', 'api_scopes', 'users', 'clients']) {
    await sql`DROP TABLE IF EXISTS ${sql.table(table)} CASCADE`.execute(db);
  }
  for (const fn of ['idp_notify_keys_change()', 'idp_notify_client_change()', 'idp_all_scope_tokens(text[])', 'idp_all_origins(text[])', 'idp_all_redirect_uris(text[])', 'idp_is_redirect_uri(text)']) {
    await sql.raw(`DROP FUNCTION IF EXISTS ${fn}`).execute(db);
  }
}
