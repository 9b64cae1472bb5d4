/** The tables of the durable store as Kysely sees them (the migrations in migrations/ make them). */
import type { ColumnType, Generated, Kysely } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** A row version (migration 2026-11-27-0010): set by the database only; bigint arrives as a string from pg. */
type RowVersion = ColumnType<string | number | bigint, never, never>;

export interface ClientsTable {
  client_id: string;
  display_name: string;
  enabled: boolean;
  secret_hash: string | null;
  secret_expires_at: NullableTimestamp;
  previous_secret_hash: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_expires_at: NullableTimestamp;
  grant_types: string[];
  scopes: string[];
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  cors_origins: string[];
  access_token_lifetime: number;
  require_consent: boolean;
  version: RowVersion;
}

export interface UsersTable {
  id: string;
  source: string;
  subject: string;
  username: string;
  password_hash: string | null;
  given_name: string | null;
  family_name: string | null;
  name: string | null;
  email: string | null;
  email_verified: boolean;
  phone_number: string | null;
  phone_number_verified: boolean;
  roles: string[];
  locked: boolean;
  must_change_password: boolean;
  must_enrol_mfa: boolean;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  version: RowVersion;
}

/** Second factors (migration 2026-11-27-0002). */
export interface UserFactorsTable {
  id: Generated<string>;
  user_id: string;
  kind: string;
  name: string;
  secret_sealed: string | null;
  /** A recovery code's keyed hash (migration 2026-11-27-0030); null for the other kinds. */
  secret_hash: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
  last_used_at: NullableTimestamp;
  credential_id: string | null;
  public_key: string | null;
  /** bigint: a string from pg, a number from JSON. */
  sign_count: ColumnType<string | number | null, number | null | undefined, number>;
  transports: ColumnType<string[], string[] | undefined, string[]>;
  backup_eligible: ColumnType<boolean, boolean | undefined, boolean>;
  backed_up: ColumnType<boolean, boolean | undefined, boolean>;
  aaguid: string | null;
}

export interface ApiScopesTable {
  name: string;
  created_at: Generated<Date>;
  version: RowVersion;
}

export interface ConsentsTable {
  user_id: string;
  client_id: string;
  scopes: string[];
  granted_at: Generated<Date>;
}

export interface SigningKeysTable {
  kid: string;
  alg: string;
  state: string;
  public_jwk: ColumnType<Record<string, unknown>, string, string>;
  private_jwk_sealed: string;
  created_at: Timestamp;
  activated_at: NullableTimestamp;
  retired_at: NullableTimestamp;
}

export interface RefreshTokenFamiliesTable {
  id: string;
  client_id: string;
  user_id: string;
  scopes: string[];
  claims: ColumnType<unknown, string | null, string | null>;
  allowed_scopes: string[];
  nonce: string | null;
  auth_time: Timestamp;
  amr: string[];
  created_at: Generated<Date>;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
  revoked_reason: string | null;
  generation: Generated<number>;
  token_salt: Buffer;
  rotated_at: NullableTimestamp;
  earlier_rotations: ColumnType<Date[], never, never>;
  token_expires_at: Timestamp;
  access_expires_at: Timestamp;
}

/** Refresh tokens issued before generations (migration 2026-11-22-0003), kept by hash. */
export interface RefreshTokensTable {
  token_hash: string;
  family_id: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  rotated_at: NullableTimestamp;
  access_jti: string;
  access_expires_at: Timestamp;
}

export interface IssuedAccessTokensTable {
  jti: string;
  user_id: string;
  client_id: string;
  expires_at: Timestamp;
}

/** Revoked access tokens by `jti`, and families by `family:<id>`, until their tokens expire. */
export interface RevocationsTable {
  jti: string;
  expires_at: Timestamp;
  revoked_at: Timestamp;
}

export interface SecretCheckTable {
  id: Generated<number>;
  sealed: string;
  updated_at: Generated<Date>;
}

export interface WebhookEndpointsTable {
  id: string;
  url: string;
  event_types: string[];
  enabled: Generated<boolean>;
  description: Generated<string>;
  secret_sealed: string;
  previous_secret_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_expires_at: NullableTimestamp;
  disabled_reason: ColumnType<string | null, string | null | undefined, string | null>;
  failing_since: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  version: RowVersion;
}

/** The outbox (migration 2026-11-27-0060). */
export interface EventsTable {
  id: string;
  type: string;
  occurred_at: Timestamp;
  data: ColumnType<Record<string, unknown>, string, string>;
}

export interface WebhookDeliveriesTable {
  id: ColumnType<string, never, never>;
  event_id: string;
  endpoint_id: string;
  state: Generated<string>;
  attempts: Generated<number>;
  step: Generated<number>;
  next_attempt_at: NullableTimestamp;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  started_at: Timestamp;
  duration_ms: number | null;
  status: number | null;
  error: string | null;
}

export interface Database {
  clients: ClientsTable;
  users: UsersTable;
  user_factors: UserFactorsTable;
  api_scopes: ApiScopesTable;
  consents: ConsentsTable;
  signing_keys: SigningKeysTable;
  refresh_token_families: RefreshTokenFamiliesTable;
  refresh_tokens: RefreshTokensTable;
  issued_access_tokens: IssuedAccessTokensTable;
  revocations: RevocationsTable;
  secret_check: SecretCheckTable;
  webhook_endpoints: WebhookEndpointsTable;
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

export type Db = Kysely<Database>;
