/** Everything kept in PostgreSQL (or PGlite), one repository per aggregate. */
import type { AccessTokenRepository, RefreshTokenRepository } from './refresh-tokens.ts';
import type { ApiScopeRepository } from './api-scopes.ts';
import type { AuditLogRepository } from './audit-log.ts';
import type { ChangeEvent } from './shared.ts';
import type { ClientRepository } from './clients.ts';
import type { ConsentRepository } from './consents.ts';
import type { FactorRepository } from './factors.ts';
import type { OutboxRepository, WebhookRepository } from './webhooks.ts';
import type { RevocationRepository } from './revocations.ts';
import type { SecretCheckRepository, SigningKeyRepository } from './signing-keys.ts';
import type { UserRepository } from './users.ts';

export type ChangeFeedState = 'listening' | 'unavailable';

/** Everything kept in PostgreSQL (or PGlite). */
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
