/**
 * The storage interfaces the rest of the service sees: durable data behind `DurableStore` (Kysely
 * over PostgreSQL or PGlite), short-lived data behind `EphemeralStore` and its stores of one
 * purpose each (Redis or an in-process map). Operations are named by intent and are atomic on
 * their own. The records they hold are in records.ts.
 */
import type { Namespace } from './ephemeral/namespaces.ts';
import type { AuditLogRepository } from './contracts/audit-log.ts';
import type { ApiScopeRecord, Versioned, ClientRecord, SignInSourceKind, UserRecord, UserInput, FactorRecord, FactorInput, SigningKeyState, SigningKeyRecord, RefreshFamilyInput, RefreshGeneration, RefreshFamilyState, RevocationRecord, CodeRecord, IssuedFromCode, WebhookEndpointRecord, WebhookEndpointInput, WebhookEndpointChange, OutboxEvent, ClaimedAttempt, DeliveryAttemptRecord, WebhookDisabledReason, FactorKind, FinishedAttempt } from './records.ts';

/** What changed in the durable store, as announced to every instance. */
export type ChangeEvent =
  | { kind: 'client'; clientId: string }
  | { kind: 'clients' }
  | { kind: 'user'; userId: string }
  | { kind: 'users' }
  | { kind: 'keys' }
  /** A revocation was recorded (RevocationRepository), by any instance, command or SQL. */
  | { kind: 'revoked'; key: string; expiresAt: Date }
  /** Revocations may have been missed (the change feed reconnected): rebuild any copy of them. */
  | { kind: 'revocations' }
  | { kind: 'apiScopes' }
  /** A webhook endpoint was added, changed or removed. */
  | { kind: 'webhooks' }
  /** Deliveries were written (an event, a redelivery): an instance with room claims them now. */
  | { kind: 'webhookDue' };

/**
 * One page of a table in key order: the rows whose key comes after `after` (from the start
 * without it), at most `limit`. A keyset read (`WHERE key > $after ORDER BY key LIMIT n`), so a
 * deep page costs what the first does, and rows added or removed meanwhile move no other row.
 */
export interface PageRequest {
  after: string | undefined;
  limit: number;
}

/**
 * `ifVersion`: the write happens only while the row's version is still this one (false when it
 * is not, as when the row is gone: the caller tells the two apart by reading it again).
 */
export type IfVersion = number | undefined;

/** Result of an upsert, so that seeding can tell what it did. */
export type UpsertResult = 'created' | 'updated' | 'unchanged';

export interface ClientRepository {
  get(clientId: string): Promise<ClientRecord | undefined>;
  /** The client with its row version, read together. */
  getVersioned(clientId: string): Promise<Versioned<ClientRecord> | undefined>;
  list(): Promise<ClientRecord[]>;
  /** Inserts or replaces a whole client; 'unchanged' when the row already held these values. */
  upsert(client: ClientRecord): Promise<UpsertResult>;
  /** Inserts a new client and returns it with its version; undefined when the id is taken (nothing written). */
  insert(client: ClientRecord): Promise<Versioned<ClientRecord> | undefined>;
  /** Applies a partial change; false when the client does not exist (or is not at `ifVersion`). */
  update(clientId: string, change: Partial<Omit<ClientRecord, 'clientId'>>, ifVersion?: IfVersion): Promise<boolean>;
  /** `update`, returning the client as written with its new version (undefined where `update` is false). */
  change(clientId: string, change: Partial<Omit<ClientRecord, 'clientId'>>, ifVersion?: IfVersion): Promise<Versioned<ClientRecord> | undefined>;
  remove(clientId: string, ifVersion?: IfVersion): Promise<boolean>;
  /** Clients by client id. */
  page(request: PageRequest): Promise<ClientRecord[]>;
  count(): Promise<number>;
}

export interface UserRepository {
  getById(id: string): Promise<UserRecord | undefined>;
  /** The user with their row version, read together. */
  getVersioned(id: string): Promise<Versioned<UserRecord> | undefined>;
  /** Case-insensitive lookup within one sign-in source. */
  getByUsername(source: SignInSourceKind, username: string): Promise<UserRecord | undefined>;
  getBySubject(source: SignInSourceKind, subject: string): Promise<UserRecord | undefined>;
  /** Case-insensitive lookup by email address within one sign-in source: at most two (more than one is ambiguous). */
  findByEmail(source: SignInSourceKind, email: string): Promise<UserRecord[]>;
  list(): Promise<UserRecord[]>;
  /** Inserts or replaces by (source, username); keeps the existing id. */
  upsert(user: UserInput): Promise<UpsertResult>;
  /** Inserts a new user and returns them with their version; undefined when the name (or id) is taken (nothing written). */
  insert(user: UserInput): Promise<Versioned<UserRecord> | undefined>;
  /** The users of these names within one source (case-insensitive), in one statement (an import's batch). */
  getManyByUsername(source: SignInSourceKind, usernames: readonly string[]): Promise<UserRecord[]>;
  /** Inserts new users in one statement (an import's batch); throws, inserting none, when one of them exists. */
  insertMany(users: readonly UserInput[]): Promise<void>;
  update(id: string, change: Partial<Omit<UserInput, 'id' | 'source'>>, ifVersion?: IfVersion): Promise<boolean>;
  /** `update`, returning the user as written with their new version (undefined where `update` is false). */
  change(id: string, change: Partial<Omit<UserInput, 'id' | 'source'>>, ifVersion?: IfVersion): Promise<Versioned<UserRecord> | undefined>;
  remove(id: string, ifVersion?: IfVersion): Promise<boolean>;
  /**
   * Users of any source in username order (case aside, then id), those after `after`, at most
   * `limit`, each with its place in that order (the next page's `after`). An index serves every
   * filter (migration 2026-11-29-0060), so a page costs the same at any depth.
   */
  page(request: UserPageRequest): Promise<Array<{ user: UserRecord; place: UserPlace }>>;
  count(): Promise<number>;
  /** How many users the filter matches (all of them without one). */
  countMatching(filter: UserFilter): Promise<number>;
}

/** Which users a list holds; the filters given all apply, each case aside. */
export interface UserFilter {
  /** The username exactly. */
  username?: string | undefined;
  /** The email address exactly. */
  email?: string | undefined;
  /** The start of the username, the email, the given or the family name. */
  q?: string | undefined;
}

/** A user's place in the username order: the lower-cased username (as the database lowers it), then the id. */
export interface UserPlace {
  name: string;
  id: string;
}

export interface UserPageRequest extends UserFilter {
  after: UserPlace | undefined;
  limit: number;
}

/**
 * Users' second factors. Each change is announced as a change of its user (`onChange`:
 * `user`), so cached users drop their factors on every instance.
 */
export interface FactorRepository {
  /** A user's factors, oldest first. */
  listForUser(userId: string): Promise<FactorRecord[]>;
  /** Adds a factor; undefined when the user already has their one factor of that kind ('totp'), or a passkey's credential id is stored already. */
  add(factor: FactorInput): Promise<FactorRecord | undefined>;
  remove(id: string): Promise<boolean>;
  /** Records a use at `at` (not announced: nothing a sign-in decides on changes). */
  touch(id: string, at: Date): Promise<void>;
  /** Replaces the sealed secret (the same secret, sealed under another master secret). */
  reseal(id: string, secretSealed: string): Promise<void>;
  /**
   * Makes `hashes` (keyed hashes of new codes) the user's recovery codes, each a row named
   * `name`, in one statement: the old set stops working as the new one is stored. Throws,
   * writing nothing, when the user does not exist or a hash repeats.
   */
  replaceRecoveryCodes(userId: string, hashes: readonly string[], name: string): Promise<FactorRecord[]>;
  /**
   * Uses up the user's recovery code whose hash is one of `candidates` (one code's hash under
   * each master secret in force) by deleting its row: of any number of callers at once, on any
   * instance, one gets it. The codes left are marked used at `at` (the set was last used then).
   * Undefined when no code matched; else how many are left.
   */
  consumeRecoveryCode(userId: string, candidates: readonly string[], at: Date): Promise<{ remaining: number } | undefined>;
  /** Removes every second factor of the user (recovery codes included); returns what was removed. */
  removeAllForUser(userId: string): Promise<FactorRecord[]>;
  /** The passkey with this credential id, read now (not from a cached user: its counter moves). */
  findPasskey(credentialId: string): Promise<FactorRecord | undefined>;
  /**
   * Records a sign-in with a passkey: its new counter, backup state and time of use, only when
   * the counter moved forward (or stays 0 where the authenticator keeps none). False when it did
   * not (a replay, a clone, or another sign-in that got there first): nothing is written.
   */
  recordPasskeyUse(id: string, use: { signCount: number; backedUp: boolean; at: Date }): Promise<boolean>;
  /**
   * Removes the user's factor `id` unless it is their last one of `standing` (the kinds that are
   * a second factor on their own): `last` then, and nothing removed. Decided with the user's row
   * locked, so two removals at once cannot take the last two.
   */
  removeUnlessLast(userId: string, id: string, standing: readonly FactorKind[]): Promise<'removed' | 'last' | 'not_found'>;
  /** Renames a factor; false when it is gone. Announced, as every change a user sees. */
  rename(id: string, name: string): Promise<boolean>;
}

export interface ApiScopeRepository {
  list(): Promise<string[]>;
  get(name: string): Promise<ApiScopeRecord | undefined>;
  /** API scopes by name. */
  page(request: PageRequest): Promise<ApiScopeRecord[]>;
  /** false when the scope already existed. */
  add(name: string): Promise<boolean>;
  /** Adds the scope and returns it with its version; undefined when it already existed (nothing written). */
  insert(name: string): Promise<ApiScopeRecord | undefined>;
  remove(name: string, ifVersion?: IfVersion): Promise<boolean>;
}

export interface ConsentRepository {
  /** Scopes the user has consented to for the client (empty when none). */
  get(userId: string, clientId: string): Promise<string[]>;
  /** Records consent to these scopes, adding to what was consented before. */
  grant(userId: string, clientId: string, scopes: string[]): Promise<void>;
  revoke(userId: string, clientId: string): Promise<void>;
  /** The user's consents, by client id. */
  listForUser(userId: string): Promise<Array<{ clientId: string; scopes: string[]; grantedAt: Date }>>;
}

export interface SigningKeyRepository {
  list(): Promise<SigningKeyRecord[]>;
  /**
   * Runs `fn` holding the cluster-wide signing-key lock, in one transaction, so that two
   * instances never both create or rotate keys. `fn` must not wait on anything but the store.
   */
  withLock<T>(fn: (keys: SigningKeyTransaction) => Promise<T>): Promise<T>;
}

export interface SigningKeyTransaction {
  list(): Promise<SigningKeyRecord[]>;
  insert(key: SigningKeyRecord): Promise<void>;
  setState(kid: string, state: SigningKeyState, at: Date): Promise<void>;
  /** Replaces the sealed private key (the same key, sealed under another master secret). */
  reseal(kid: string, privateJwkSealed: string): Promise<void>;
}

/** An access token issued together with a refresh token of a family from before generations. */
export interface IssuedAccess {
  jti: string;
  expiresAt: Date;
}

/** A rotation: the family moves from generation `from` to the next, if it is still there. */
export interface AdvanceInput {
  familyId: string;
  /** The authenticated client: another client's family is not advanced. */
  clientId: string;
  from: number;
  /** The issue time of the new generation's tokens (whole seconds). */
  issuedAt: Date;
  /** Idle expiry of the new generation (capped at the family's end by the store). */
  tokenExpiresAt: Date;
  accessExpiresAt: Date;
  now: Date;
  /** Rotation times before this are no longer kept (the grace window has passed them). */
  graceSince: Date;
}

/** What revoking families leaves for the revocation list. */
export interface RevokedFamilies {
  /** Each family this call revoked, with the expiry of the last access token it issued. */
  families: Array<{ id: string; accessExpiresAt: Date }>;
  /** Live access tokens of those families issued before generations, one by one. */
  legacyAccess: IssuedAccess[];
}

/** A live family as a user's list of sessions shows it. */
export interface UserRefreshFamily {
  id: string;
  clientId: string;
  createdAt: Date;
  /** The last rotation, or the creation when never rotated. */
  lastUsedAt: Date;
  /** The family's absolute end. */
  expiresAt: Date;
}

export interface RefreshTokenRepository {
  /** Creates a family at generation 0. */
  createFamily(family: RefreshFamilyInput & Pick<RefreshGeneration, 'tokenSalt' | 'tokenExpiresAt' | 'accessExpiresAt'>): Promise<void>;
  get(familyId: string): Promise<RefreshFamilyState | undefined>;
  /**
   * A refresh token issued before generations (kept by hash): its family, and whether it was
   * that family's current token (generation 0) or an earlier one.
   */
  findLegacy(tokenHash: string): Promise<{ familyId: string; current: boolean } | undefined>;
  /**
   * Rotates in one statement that only moves a live family still at `from`: of two racing
   * rotations of one token, on any instances, exactly one returns true.
   */
  advance(input: AdvanceInput): Promise<boolean>;
  /** Revokes a family (once: a second call revokes nothing and returns no family). */
  revokeFamily(familyId: string, reason: string, now: Date): Promise<RevokedFamilies>;
  /** A user's live families (not revoked, not past their end or idle expiry at `now`), oldest first. */
  listForUser(userId: string, now: Date): Promise<UserRefreshFamily[]>;
    /** Revokes every family of a user at a client (end session). */
  revokeForUserAndClient(userId: string, clientId: string, reason: string, now: Date): Promise<RevokedFamilies>;
  /**
   * Deletes up to `limit` families past their absolute end whose last access token has expired
   * too (nothing of them can be used or revoked any more); returns how many.
   */
  purgeEnded(now: Date, limit: number): Promise<number>;
}

/** Access tokens issued without a refresh token, kept until they expire, for end session. */
export interface AccessTokenRepository {
  record(userId: string, clientId: string, access: IssuedAccess, now: Date): Promise<void>;
  /** Removes and returns a client's unexpired access tokens for a user. */
  takeLive(userId: string, clientId: string, now: Date): Promise<IssuedAccess[]>;
}

/**
 * The durable record of revocations: what every instance rebuilds its in-memory copy from, so
 * that a revocation outlives the loss of Redis. Each new record is announced to every instance
 * (`onChange`: `revoked`).
 */
export interface RevocationRepository {
  /** Records revocations (those expired at `now` are skipped; one recorded already stays as it is). */
  add(records: readonly RevocationRecord[], now: Date): Promise<void>;
  isRevoked(key: string, now: Date): Promise<boolean>;
  /** Revocations still in force at `now`, at most `limit` of them. */
  live(now: Date, limit: number): Promise<RevocationRecord[]>;
  /**
   * Revokes every refresh token family of a user and every access token issued to them, in one
   * statement, and returns what it recorded. The store does the same by itself when a user is
   * locked, removed, or flagged to change their password or enrol a second factor.
   */
  revokeUser(userId: string, reason: string, now: Date): Promise<RevocationRecord[]>;
  /** Deletes up to `limit` revocations whose tokens have expired at `now`; returns how many. */
  purgeExpired(now: Date, limit: number): Promise<number>;
}

/**
 * The outbox: events that an enabled endpoint subscribes to, each with one delivery per such
 * endpoint. On a transaction's store, the event is written with the transaction's change.
 */
export interface OutboxRepository {
  /**
   * Writes the event and its deliveries (one per enabled endpoint subscribed to its type, or
   * to only `endpointId` when given, enabled or not); nothing when none is. Returns how many.
   */
  append(event: OutboxEvent, endpointId?: string): Promise<number>;
  /**
   * Writes several events at once, each as `append` without an endpoint would. With `claim`, the
   * caller takes the first attempts of their deliveries within those limits as they are written
   * (their leases start, their attempts are recorded as started, and no other instance is woken
   * for them): they come back in `claimed`. The rest are due, and announced, as `append`'s are.
   */
  appendMany(events: readonly OutboxEvent[], claim?: ClaimLimits): Promise<AppendedEvents>;
}

/** What `appendMany` wrote: how many deliveries, and those the caller claimed at once. */
export interface AppendedEvents {
  deliveries: number;
  claimed: ClaimedAttempt[];
}

/** What claiming due attempts may take (DurableStore.webhooks.claim). */
export interface ClaimLimits {
  /** Attempts claimed at most. */
  total: number;
  /** Attempts in flight per endpoint at most, counting `busy`. */
  perEndpoint: number;
  /** Attempts this instance has in flight, by endpoint. */
  busy: ReadonlyMap<string, number>;
  /** How long a claimed attempt is this instance's: after it, the delivery is due again. */
  leaseSeconds: number;
}

/** Webhook endpoints and their deliveries. Times are the database's. */
export interface WebhookRepository {
  create(endpoint: WebhookEndpointInput): Promise<WebhookEndpointRecord>;
  get(id: string): Promise<WebhookEndpointRecord | undefined>;
  list(): Promise<WebhookEndpointRecord[]>;
  /**
   * Enabling an endpoint forgets why it was disabled and since when it failed. With `ifVersion`,
   * only the row at that version is written (undefined / false otherwise).
   */
  update(id: string, change: WebhookEndpointChange, ifVersion?: number): Promise<WebhookEndpointRecord | undefined>;
  remove(id: string, ifVersion?: number): Promise<boolean>;
  /** The event types enabled endpoints subscribe to (`*` among them when one takes every type). */
  subscribedTypes(): Promise<string[]>;
  /**
   * Claims due attempts of enabled endpoints: each delivery is taken by one caller (FOR UPDATE
   * SKIP LOCKED), its attempt count raised and the attempt recorded as started, in one statement.
   */
  claim(limits: ClaimLimits): Promise<ClaimedAttempt[]>;
  /**
   * Records how attempts ended and what follows for their deliveries and endpoints, in one
   * statement (an endpoint's failing or healthy state follows the last of its attempts given).
   */
  finish(attempts: readonly FinishedAttempt[]): Promise<void>;
  /**
   * Disables the endpoint if it is enabled and, for `failing`, has failed since before
   * `failingFor` seconds ago; true when this call disabled it.
   */
  disable(endpointId: string, reason: WebhookDisabledReason, failingForSeconds: number): Promise<boolean>;
  /** Seconds until the next pending attempt of an enabled endpoint is due (0 if one is); undefined when none. */
  nextDueIn(): Promise<number | undefined>;
  /**
   * The attempts of an endpoint's deliveries, newest first: `limit` of them, after the one whose
   * `key` is `after` (a key this method gave; the newest when absent).
   */
  attempts(endpointId: string, limit: number, after?: string): Promise<DeliveryAttemptRecord[]>;
  /** How many attempts the endpoint's deliveries made (every page of `attempts` together). */
  countAttempts(endpointId: string): Promise<number>;
  /** Makes a delivery of the endpoint due now, from the start of the schedule; false when unknown. */
  redeliver(endpointId: string, deliveryId: string): Promise<boolean>;
  /** Pending deliveries of enabled endpoints, and the age in seconds of the oldest one's event. */
  backlog(): Promise<{ pending: number; oldestAgeSeconds: number }>;
  /** Deletes up to `limit` events that happened before `before`, with their deliveries; returns how many. */
  purgeEvents(before: Date, limit: number): Promise<number>;
}

/** Everything kept in PostgreSQL (or PGlite). */
/** The check value of the master secret (one row): what tells a wrong IDP_SECRET at start. */
export interface SecretCheckRepository {
  /** The sealed check value; undefined until the first start wrote it. */
  get(): Promise<string | undefined>;
  /**
   * Writes the check value: with `replacing` undefined only if there is none yet (several
   * instances may start at once), else only if it is still `replacing`. False when another
   * writer came first.
   */
  put(sealed: string, replacing?: string): Promise<boolean>;
}
export type ChangeFeedState = 'listening' | 'unavailable';

export interface DurableStore {
  readonly kind: 'postgres' | 'embedded';
  readonly clients: ClientRepository;
  readonly users: UserRepository;
  readonly factors: FactorRepository;
  readonly apiScopes: ApiScopeRepository;
  readonly consents: ConsentRepository;
  readonly signingKeys: SigningKeyRepository;
  readonly refreshTokens: RefreshTokenRepository;
  readonly accessTokens: AccessTokenRepository;
  readonly revocations: RevocationRepository;
  readonly secretCheck: SecretCheckRepository;
  readonly outbox: OutboxRepository;
  readonly webhooks: WebhookRepository;
  readonly auditLog: AuditLogRepository;
  /** Applies pending migrations (safe to call from several instances at once). */
  migrate(): Promise<string[]>;
  /** Runs several writes as one transaction; nothing is written if `fn` throws. */
  transaction<T>(fn: (store: DurableStore) => Promise<T>): Promise<T>;
  /** Subscribes to changes made by any instance or by SQL; returns an unsubscribe function. */
  onChange(listener: (event: ChangeEvent) => void): () => void;
  /**
   * Whether changes are known to arrive: `listening` once a probe sent through a data connection
   * came back on the listen connection; `unavailable` while it is down or the probe is lost (a
   * transaction pooler in between).
   */
  changeFeed(): ChangeFeedState;
  /** Resolves when the database answers; rejects otherwise. */
  ping(): Promise<void>;
  /** The database server's clock (`now()`), to measure this machine's drift against it. */
  serverTime(): Promise<Date>;
  /** PostgreSQL only, for the metrics: connections of the pool in use, and queries waiting for one. */
  poolStats?(): { inUse: number; waiting: number };
  /**
   * Embedded only: serves this database over the PostgreSQL protocol on a Unix socket (PGlite
   * serves one process: psql and the command line reach it there) until the returned function is called.
   */
  share?(socketPath: string): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** What `AttemptStore.take` allows on a key. */
export interface AttemptRule {
  /** Attempts counted before the key locks (the one reaching it locks, judged or not). */
  limit: number;
  /** The count lives this long from its first attempt, or until its lock ends if that is later. */
  windowSeconds: number;
  /** The attempt that brings the count to `limit` + k locks for lockSeconds * 2^k ... */
  lockSeconds: number;
  /** ... at most this long. */
  maxLockSeconds: number;
}

export { NAMESPACES, type Namespace } from './ephemeral/namespaces.ts';

/**
 * One write of a batch (`EphemeralStore.write`). An index (`index`, `unindex`) is a set of
 * members under one key, each with its own expiry; the key lives as long as its latest member
 * (`EphemeralStore.indexed`).
 */
export type EphemeralWrite =
  | { op: 'set'; ns: Namespace; key: string; value: unknown; ttlSeconds: number }
  | { op: 'delete'; ns: Namespace; key: string }
  /** Adds `member` to the index `key`, or renews it, to expire `ttlSeconds` from now. */
  | { op: 'index'; ns: Namespace; key: string; member: string; ttlSeconds: number }
  | { op: 'unindex'; ns: Namespace; key: string; member: string };

/** The writes of each outcome of `EphemeralStore.deleteAndWrite`. */
export interface EphemeralWritesByOutcome {
  deleted: readonly EphemeralWrite[];
  missing: readonly EphemeralWrite[];
}

/**
 * Short-lived values with a time to live. Values are JSON. Every operation is atomic across
 * instances sharing one store. Namespaces (`NAMESPACES`) keep kinds of values apart.
 */
export interface EphemeralStore {
  readonly kind: 'redis' | 'memory';
  /** Authorization codes on this store. */
  readonly codes: CodeStore;
  /** TOTP codes accepted already. */
  readonly usedTotpCodes: UsedTotpCodeStore;
  /** Idempotency keys of the administration API, claimed by the first request that brings one. */
  readonly idempotencyKeys: IdempotencyKeyStore;
  /** Round trips to an upstream provider. */
  readonly roundTrips: RoundTripStore;
  /** WebAuthn challenges on their way to the authenticator and back. */
  readonly passkeyChallenges: PasskeyChallengeStore;
  /** Requests counted for the rate limits. */
  readonly rates: RateCounterStore;
  /** Messages to every instance. */
  readonly channels: ChannelStore;
  /** Sign-in attempts, counted and locked per account and per address (the throttle). */
  readonly attempts: AttemptStore;
  set(ns: Namespace, key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /**
   * Several sets and deletes, in order, in one round trip where the store can (one Redis
   * MULTI; a cluster sends them key by key). Each write is atomic; the batch is not.
   */
  write(writes: readonly EphemeralWrite[]): Promise<void>;
  get<T>(ns: Namespace, key: string): Promise<T | undefined>;
  /**
   * Deletes a value and, with it, makes the writes of the outcome: `deleted` when the value was
   * there, `missing` when not; true when this call deleted it. Exactly one of concurrent callers
   * deletes it, and only its `deleted` writes are made. One atomic step (one
   * script) outside a cluster; a cluster deletes, then writes key by key (so there the writes
   * are not in order with other calls of the same tick).
   */
  deleteAndWrite(ns: Namespace, key: string, writes: EphemeralWritesByOutcome): Promise<boolean>;
  delete(ns: Namespace, key: string): Promise<void>;
  /**
   * The live members of the index `key` (see `EphemeralWrite`), oldest expiry first; expired
   * members are dropped on the way. One key, one atomic step (cluster-safe).
   */
  indexed(ns: Namespace, key: string): Promise<string[]>;
  /** Every live value of a namespace, by key: a full scan, for rebuilding a local copy. */
  entries<T>(ns: Namespace): Promise<Array<[string, T]>>;
  ping(): Promise<void>;
  /** Redis only, for the metrics: whether the connection is up now (no round trip). */
  connected?(): boolean;
  close(): Promise<void>;
}

/**
 * TOTP codes already accepted, per user and time step (RFC 6238 §5.2: a code is accepted once),
 * across instances.
 */
export interface UsedTotpCodeStore {
  /** Marks the user's code of `timeStep` used for `ttlSeconds`; true for exactly one caller. */
  claim(userId: string, timeStep: number, ttlSeconds: number): Promise<boolean>;
}

/**
 * Idempotency keys (`NAMESPACES.adminIdempotency`): the first request with a key claims it, so
 * of two sent at once only one runs; what it answered is then kept under the key (`set`).
 */
export interface IdempotencyKeyStore {
  /** Stores `value` under `key` unless something is there; true for exactly one caller. */
  claim(key: string, value: unknown, ttlSeconds: number): Promise<boolean>;
}

/** Requests counted per subject and window (the token and authorize rate limits), across instances. */
export interface RateCounterStore {
  /**
   * Adds `by` (default 1) to the subject's count in `window` and returns the new count; the
   * count lives `ttlSeconds` from its first addition.
   */
  add(subject: string, window: number, ttlSeconds: number, by?: number): Promise<number>;
}

/** The two round trips to an upstream provider: the sign-in (keyed by its `state`) and the sign-out. */
export type RoundTripLeg = 'sign-in' | 'sign-out';

/** What a round trip to an upstream provider must find when it comes back; each is finished once. */
export interface RoundTripStore {
  start(leg: RoundTripLeg, key: string, trip: unknown, ttlSeconds: number): Promise<void>;
  /** The trip, to exactly one caller across instances; undefined when unknown, expired or finished. */
  finish<T>(leg: RoundTripLeg, key: string): Promise<T | undefined>;
}

/** WebAuthn challenges, by the browser and ceremony that asked: whoever verifies takes one once, on any instance. */
export interface PasskeyChallengeStore {
  /** Stores the challenge under `key` (replacing one asked for before). */
  issue(key: string, challenge: unknown, ttlSeconds: number): Promise<void>;
  /** The challenge, to exactly one caller across instances; undefined when unknown, expired or taken. */
  take<T>(key: string): Promise<T | undefined>;
}

/** Attempts at something limited, per key, across instances (`NAMESPACES.signInAttempts`). */
export interface AttemptStore {
  /**
   * Takes one attempt at something limited on each key, before it is judged, in one atomic step
   * across instances, and says which key refused: the first locked key in the order given (and
   * nothing counted on any key) while one of them is locked; undefined when each attempt was
   * counted. The attempt that brings a key's count to its limit or past it locks that key at
   * once, so that concurrent attempts are refused instead of judged. An attempt judged a failure
   * is simply kept; one that does not count is given back (`giveBack`). One round trip outside a
   * cluster (a script over every key); a cluster takes key by key and gives back what was taken
   * when one refused.
   */
  take(attempts: ReadonlyArray<{ key: string; rule: AttemptRule }>): Promise<string | undefined>;
  /**
   * Uncounts an attempt taken with `take` on each key, and lifts a key's lock when it was
   * set by a count that included it. Nothing happens to a count that expired meanwhile. One round
   * trip outside a cluster.
   */
  giveBack(keys: readonly string[]): Promise<void>;
}

/** Messages published to every instance sharing the store (none is kept for a later listener). */
export interface ChannelStore {
  /** Sends `message` to every subscriber of `channel`, on every instance (this one included). */
  publish(channel: string, message: string): Promise<void>;
  /**
   * Listens on `channel`: `message` gets what is published while listening; `listening(true)`
   * when listening starts (again after a reconnect: what was published meanwhile is lost),
   * `listening(false)` when it stops. Returns a function that stops listening.
   */
  subscribe(channel: string, listener: ChannelListener): () => void;
}

export interface ChannelListener {
  message(message: string): void;
  listening(listening: boolean): void;
}

/** The outcome of redeeming a code (`CodeStore.redeem`). */
export type CodeRedemption =
  | { outcome: 'redeemed'; record: CodeRecord }
  /** A second redemption: `issued` is what the first one issued, once it has recorded it. */
  | { outcome: 'replayed'; issued: IssuedFromCode | undefined }
  /** Never issued, or expired. */
  | { outcome: 'unknown' };

/**
 * Authorization codes (RFC 6749 §4.1.2): single use across instances, with what the first use
 * issued kept so that a replay revokes it (OAuth 2.0 Security BCP §4.5.3). Codes are stored
 * only as their hash, for `CODE_TTL_SECONDS`.
 */
export interface CodeStore {
  /**
   * A new code for `record`, and the write that stores the record under the code's hash: the
   * caller sends it (with its other writes, in one batch) before handing the code out.
   */
  create(record: CodeRecord): { code: string; write: EphemeralWrite };
  /** Redeems a code: exactly one redemption across instances gets the record. One round trip. */
  redeem(code: string): Promise<CodeRedemption>;
  /**
   * Remembers what the first redemption issued; true when a replay came in meanwhile (it could
   * not know what to revoke: the caller revokes it now). One round trip.
   */
  recordIssued(code: string, issued: IssuedFromCode): Promise<boolean>;
}

export type { ClaimedAttempt, AttemptOutcome, DeliveryNext, FinishedAttempt, OutboxEvent, WebhookDisabledReason } from './records.ts';
