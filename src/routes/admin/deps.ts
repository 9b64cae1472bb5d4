/** What the administration API's routes are given (made once in app.ts from the services). */
import type { AdminAccessDeps } from '../../admin/api-access.ts';
import { createIdempotency, type Idempotency } from '../../admin/idempotency.ts';
import type { WebhookDeps } from '../../admin/webhooks.ts';
import type { Clock } from '../../clock.ts';
import type { SignInSourceKind } from '../../store/records.ts';
import type { DurableStore } from '../../store/types.ts';
import type { KeyManager } from '../../tokens/keys.ts';
import type { Services } from '../../composition/services.ts';
import type { UserSessionServices } from '../../composition/protocol.ts';
import type { RateLimiter } from '../../sessions/rate-limiters.ts';
import type { RequestAudit } from '../shared/audit.ts';

export interface AdminApiDeps {
  access: AdminAccessDeps;
  durable: DurableStore;
  keys: KeyManager;
  clock: Clock;
  /** The master secret (TOTP secrets are sealed under a key derived from it). */
  secret: Buffer;
  /** The configured sign-in source: users are looked up there first. */
  signInSource: SignInSourceKind;
  idempotency: Idempotency;
  /** A user's refresh token families and browser sessions, listed and ended (src/admin/sessions.ts). */
  userSessions: Pick<UserSessionServices, 'listUserSessions' | 'endUserSessions' | 'endUserSession'>;
  audit: RequestAudit;
  /** What webhook endpoints need besides the store: their secrets' keyring and the address policy (SSRF). */
  webhooks: Pick<WebhookDeps, 'keyring' | 'policy' | 'resolve'>;
  /** Calls per client and minute (IDP_ADMIN_API_RATE_LIMIT): beyond, 429 with Retry-After. */
  rateLimiter: RateLimiter;
}

/** The members of the services the API is made from, and no other. */
export type AdminApiServices = Pick<Services,
  'config' | 'clock' | 'keys' | 'durable' | 'revocations' | 'clients' | 'users' | 'secret' | 'ephemeral' | 'userSessions'
  | 'webhookKeyring' | 'addressPolicy' | 'adminApiRateLimiter'>;

/** The API's dependencies from the services, recording audit events through `audit`. */
export function createAdminApiDeps(services: AdminApiServices, audit: RequestAudit): AdminApiDeps {
  const { config, clock, keys, durable } = services;
  return {
    access: { issuer: config.issuer, clock, keys, revocations: services.revocations, clients: services.clients, users: services.users },
    durable,
    keys,
    clock,
    secret: services.secret,
    signInSource: config.signIn.source,
    idempotency: createIdempotency(services.ephemeral, services.secret),
    userSessions: services.userSessions,
    audit,
    webhooks: { keyring: services.webhookKeyring, policy: services.addressPolicy },
    rateLimiter: services.adminApiRateLimiter,
  };
}
