/**
 * The records the service keeps and their rules: clients, users and their second factors, signing
 * keys, refresh token families, revocations and authorization codes, as the rest of the service
 * sees them. Where they are kept is src/store/types.ts.
 */
export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials';
export const GRANT_TYPES: readonly GrantType[] = ['authorization_code', 'refresh_token', 'client_credentials'];

/** The clients table's rule for a client id (CHECK clients_client_id_format): 1 to 200 visible ASCII characters. */
export function isClientId(value: string): boolean {
  return /^[!-~]{1,200}$/.test(value);
}

/**
 * The administration console's client id: a built-in application (src/console/), never a row of
 * `clients` (CHECK clients_client_id_not_reserved), so no SQL, API or command can pose as it.
 * Its sign-ins need a second factor: a user without one enrols one first (sessions/steps.ts).
 */
export const CONSOLE_CLIENT_ID = 'idp-admin-console';

/** A client as an administrator configures it (one row of the `clients` table). */
export interface ClientRecord {
  clientId: string;
  displayName: string;
  enabled: boolean;
  /** Hash as printed by `idp secret-hash`; null for public clients. */
  secretHash: string | null;
  secretExpiresAt: Date | null;
  /**
   * The secret before the last rotation, still accepted until `expiresAt` so the client can
   * switch without downtime; absent (or null, to clear it in an update) when there is none.
   */
  previousSecret?: PreviousClientSecret | null;
  grantTypes: GrantType[];
  scopes: string[];
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  corsOrigins: string[];
  /** Seconds. */
  accessTokenLifetime: number;
  requireConsent: boolean;
}

/** A client's previous secret: its hash, and when it stops being accepted. */
export interface PreviousClientSecret {
  hash: string;
  expiresAt: Date;
}

/**
 * A record as read with its row version (migration 2026-11-27-0010): the database gives the row a
 * new one on every write, whoever writes (an ETag of the administration API).
 */
export interface Versioned<T> {
  record: T;
  version: number;
}

/** An API scope (such as orders.read) an administrator created. */
export interface ApiScopeRecord {
  name: string;
  createdAt: Date;
  version: number;
}

export type SignInSourceKind = 'local' | 'ldap' | 'oidc';

/** A user account. For directory and upstream users it is the local record kept for consent and flags. */
export interface UserRecord {
  /** Internal, opaque, stable identifier; referenced by consents and refresh token families. */
  id: string;
  source: SignInSourceKind;
  /** The `sub` claim: equal to `id` for local users. */
  subject: string;
  username: string;
  /** argon2id PHC string; null for users of other sources. */
  passwordHash: string | null;
  givenName: string | null;
  familyName: string | null;
  name: string | null;
  email: string | null;
  emailVerified: boolean;
  phoneNumber: string | null;
  phoneNumberVerified: boolean;
  roles: string[];
  /** The user's second factors, read with the user (`FactorRepository` writes them). */
  factors: FactorRecord[];
  locked: boolean;
  mustChangePassword: boolean;
  mustEnrolMfa: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** A new or replaced user; timestamps are kept by the store, factors by `FactorRepository`. */
export type UserInput = Omit<UserRecord, 'createdAt' | 'updatedAt' | 'factors'>;

/** What a second factor is: an authenticator app (TOTP), a recovery code, a passkey. */
export type FactorKind = 'totp' | 'recovery_code' | 'passkey';

/** One second factor of a user (one row of `user_factors`). */
export interface FactorRecord {
  id: string;
  userId: string;
  kind: FactorKind;
  /** What the user or an administrator calls it (1 to 100 characters). */
  name: string;
  /** For 'totp': the secret sealed with the key derived from IDP_SECRET for `totp:<user id>`. */
  secretSealed: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** For 'passkey': the WebAuthn credential (absent for other kinds). */
  passkey?: PasskeyCredential;
}

/** What a passkey row keeps of its WebAuthn credential (binary values as base64url). */
export interface PasskeyCredential {
  /** The credential id: unique over every user. */
  credentialId: string;
  /** The COSE public key; never shown, never logged. */
  publicKey: string;
  /** The authenticator's signature counter as last seen (0: the authenticator keeps none). */
  signCount: number;
  /** Authenticator transports (`internal`, `usb`, `hybrid`, ...), as the browser reported them. */
  transports: string[];
  /** Whether the credential may be backed up (synced), and whether it is. */
  backupEligible: boolean;
  backedUp: boolean;
  /** The authenticator's model (all zeros with attestation 'none' on most). */
  aaguid: string;
}

/** A new factor; the store gives it its id and creation time. */
export type FactorInput = Pick<FactorRecord, 'userId' | 'kind' | 'name' | 'secretSealed' | 'passkey'>;

/** The user's passkeys, oldest first. */
export function passkeyFactors(user: Pick<UserRecord, 'factors'>): FactorRecord[] {
  return user.factors.filter((factor) => factor.kind === 'passkey');
}

/**
 * The kinds that are a second factor on their own: the authenticator app and passkeys. Recovery
 * codes only stand in for one (they are made with the first, and a user keeps one of these).
 */
export const STANDING_FACTOR_KINDS: readonly FactorKind[] = ['totp', 'passkey'];

/** Whether the user has set up a second factor: an authenticator app or a passkey. */
export function hasSecondFactor(user: Pick<UserRecord, 'factors'>): boolean {
  return user.factors.some((factor) => STANDING_FACTOR_KINDS.includes(factor.kind));
}

/**
 * The user's first standing factor (by creation, then id): the enrolment that stored it shows the
 * recovery codes. Read after each write, of two enrolments at once exactly one finds its own.
 */
export function firstStandingFactor(factors: readonly FactorRecord[]): FactorRecord | undefined {
  const standing = factors.filter((factor) => STANDING_FACTOR_KINDS.includes(factor.kind));
  return standing.reduce<FactorRecord | undefined>((first, f) =>
    (!first || f.createdAt < first.createdAt || (f.createdAt.getTime() === first.createdAt.getTime() && f.id < first.id) ? f : first), undefined);
}

/** The user's authenticator app, if enrolled (one at most). */
export function totpFactor(user: Pick<UserRecord, 'factors'>): FactorRecord | undefined {
  return user.factors.find((factor) => factor.kind === 'totp');
}

export type UserFlag = 'locked' | 'mustChangePassword' | 'mustEnrolMfa';

/** Lifecycle of a signing key: published before it signs, published after it signs, then gone. */
export type SigningKeyState = 'next' | 'current' | 'previous' | 'retired';

export interface SigningKeyRecord {
  kid: string;
  alg: 'RS256';
  state: SigningKeyState;
  /** Public JWK (kty, n, e). */
  publicJwk: Record<string, unknown>;
  /** Private JWK sealed with the key-encryption key derived from IDP_SECRET. */
  privateJwkSealed: string;
  createdAt: Date;
  activatedAt: Date | null;
  retiredAt: Date | null;
}

/** The claim names of an OIDC `claims` request parameter. */
export interface ClaimsRequestRecord {
  id_token: string[];
  userinfo: string[];
}

/** One authorization's refresh tokens: created at the code exchange, rotated at every refresh. */
export interface RefreshFamilyInput {
  id: string;
  clientId: string;
  userId: string;
  scopes: string[];
  claims: ClaimsRequestRecord | null;
  /** Scopes that bound the claims parameter (consented, or allowed without consent). */
  allowedScopes: string[];
  nonce: string | null;
  authTime: Date;
  amr: string[];
  /** The absolute end of the family: rotation never extends it. */
  expiresAt: Date;
}

export interface RefreshFamilyRecord extends RefreshFamilyInput {
  createdAt: Date;
  revokedAt: Date | null;
}

/** The generation a family is at, and what its tokens are checked against. */
export interface RefreshGeneration {
  /** 0 at the code exchange, one more at every rotation. */
  generation: number;
  /** Random, per family: part of every token's MAC (see tokens/refresh-tokens.ts). */
  tokenSalt: Buffer;
  /** When the current generation was issued by a rotation; null at generation 0. */
  rotatedAt: Date | null;
  /**
   * When the generations before the current one were issued, newest first, as far back as the
   * grace window reached at the last rotation (a few at most).
   */
  earlierRotations: Date[];
  /** Idle expiry of the current generation: never later than the family's absolute end. */
  tokenExpiresAt: Date;
  /** Expiry of the latest access token issued from the family. */
  accessExpiresAt: Date;
}

export type RefreshFamilyState = RefreshFamilyRecord & RefreshGeneration;

/**
 * A revoked access token, by `jti`, or every access token of a refresh token family, by the
 * family's key (`family:<id>`, see tokens/revocation-list.ts), until the tokens it covers expire.
 */
export interface RevocationRecord {
  key: string;
  expiresAt: Date;
}

/** What a sign-in grants a client, kept under an authorization code until it is redeemed. */
export interface CodeRecord {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  userId: string;
  scopes: string[];
  /** Seconds since the epoch. */
  authTime: number;
  amr: string[];
  nonce?: string | undefined;
  claims?: ClaimsRequestRecord | undefined;
  /** Scopes the user consented to (or the client may use without consent): bounds the claims parameter. */
  allowedScopes: string[];
  /**
   * The store key of the browser session that signed in (never sent anywhere): the console learns
   * from it which session it came from, even on another origin than the session's cookie.
   */
  browserSessionKey?: string | undefined;
}

/** What the first redemption of a code issued, so that a replay can revoke it. */
export interface IssuedFromCode {
  jti: string;
  /** Seconds since the epoch. */
  accessExpiresAt: number;
  familyId: string | null;
}

/** Why the service disabled a webhook endpoint by itself: it answered 410, or failed for days. */
export type WebhookDisabledReason = 'gone' | 'failing';

/** A webhook endpoint (`webhook_endpoints`). Its secrets are sealed; `*` in `eventTypes` is every type. */
export interface WebhookEndpointRecord {
  id: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  description: string;
  secretSealed: string;
  /** The secret replaced by a rotation, which still signs beside the new one until `previousSecretExpiresAt`. */
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
  disabledReason: WebhookDisabledReason | null;
  /** Since when every attempt has failed (null after a success). */
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
  /** The row version (migration 2026-11-27-0080): new at every write, whoever makes it. */
  version: number;
}

export type WebhookEndpointInput = Pick<WebhookEndpointRecord, 'id' | 'url' | 'eventTypes' | 'enabled' | 'description' | 'secretSealed'>;

/** What an administrator may change of an endpoint (a secret rotation sets both secrets). */
export type WebhookEndpointChange = Partial<Pick<WebhookEndpointRecord, 'url' | 'eventTypes' | 'enabled' | 'description' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'>>;

/** An event of the outbox: `data` holds names and ids, never a secret. */
export interface OutboxEvent {
  id: string;
  type: string;
  occurredAt: Date;
  data: Record<string, unknown>;
}

/** An attempt claimed by this instance: the event, the endpoint, and the attempt's number. */
export interface ClaimedAttempt {
  deliveryId: string;
  attempt: number;
  /** The position in the retry schedule of this attempt (0: the first). */
  step: number;
  /** The event, its `data` as the JSON text the database keeps (it goes into the body as it is). */
  event: Omit<OutboxEvent, 'data'> & { dataJson: string };
  endpoint: Pick<WebhookEndpointRecord, 'id' | 'url' | 'secretSealed' | 'previousSecretSealed' | 'previousSecretExpiresAt'>;
}

/** How an attempt ended: an HTTP status, or the kind of error (never the answer's body). */
export interface AttemptOutcome {
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** What follows an attempt for its delivery. */
export type DeliveryNext =
  | { state: 'succeeded' }
  | { state: 'failed' }
  | { state: 'pending'; retryInSeconds: number };

/** An attempt that ended: which one, how, and what follows for its delivery. */
export interface FinishedAttempt {
  deliveryId: string;
  attempt: number;
  endpointId: string;
  outcome: AttemptOutcome;
  next: DeliveryNext;
}

/** One attempt of the delivery log, newest first. */
export interface DeliveryAttemptRecord {
  /** Its place in the log (start time in microseconds, delivery, attempt): where a page ends. */
  key: string;
  deliveryId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  startedAt: Date;
  durationMs: number | null;
  status: number | null;
  error: string | null;
  state: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: Date | null;
}
