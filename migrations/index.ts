/**
 * Every migration, listed statically (no directory scan), in the order they apply.
 * Names are date-prefixed; a migration is frozen once landed.
 */
import type { Migration } from 'kysely/migration';
import * as initial from './2026-11-22-0001-initial.ts';
import * as usersNotify from './2026-11-22-0002-users-notify.ts';
import * as refreshGenerations from './2026-11-22-0003-refresh-generations.ts';
import * as apiScopesNotify from './2026-11-24-0007-api-scopes-notify.ts';
import * as durableRevocations from './2026-11-24-0004-durable-revocations.ts';
import * as redirectUriSchemes from './2026-11-24-0001-redirect-uri-schemes.ts';
import * as secretCheck from './2026-11-24-0010-secret-check.ts';
import * as canonicalUsernames from './2026-11-27-0001-canonical-usernames.ts';
import * as secondFactors from './2026-11-27-0002-second-factors.ts';
import * as clientPreviousSecret from './2026-11-27-0003-client-previous-secret.ts';
import * as rowVersions from './2026-11-27-0010-row-versions.ts';
import * as recoveryCodes from './2026-11-27-0030-recovery-codes.ts';
import * as userEmailLookup from './2026-11-27-0040-user-email-lookup.ts';
import * as webhooks from './2026-11-27-0060-webhooks.ts';
import * as webhookClaims from './2026-11-27-0065-webhook-claims.ts';
import * as passkeys from './2026-11-27-0070-passkeys.ts';
import * as webhookRowVersions from './2026-11-27-0080-webhook-row-versions.ts';
import * as webhookOwnClaims from './2026-11-27-0085-webhook-own-claims.ts';
import * as webhookDirectDeliveries from './2026-11-29-0020-webhook-direct-deliveries.ts';
import * as nfkcUsernames from './2026-11-29-0021-nfkc-usernames.ts';
import * as userSearch from './2026-11-29-0060-user-search.ts';
import * as auditLog from './2026-11-29-0100-audit-log.ts';
import * as consoleClientId from './2026-11-29-0160-console-client-id.ts';
import * as usersLocked from './2026-11-29-0180-users-locked.ts';

export const migrations: Record<string, Migration> = {
  '2026-11-22-0001-initial': initial,
  '2026-11-22-0002-users-notify': usersNotify,
  '2026-11-22-0003-refresh-generations': refreshGenerations,
  '2026-11-24-0001-redirect-uri-schemes': redirectUriSchemes,
  '2026-11-24-0004-durable-revocations': durableRevocations,
  '2026-11-24-0007-api-scopes-notify': apiScopesNotify,
  '2026-11-24-0010-secret-check': secretCheck,
  '2026-11-27-0001-canonical-usernames': canonicalUsernames,
  '2026-11-27-0002-second-factors': secondFactors,
  '2026-11-27-0003-client-previous-secret': clientPreviousSecret,
  '2026-11-27-0010-row-versions': rowVersions,
  '2026-11-27-0030-recovery-codes': recoveryCodes,
  '2026-11-27-0040-user-email-lookup': userEmailLookup,
  '2026-11-27-0060-webhooks': webhooks,
  '2026-11-27-0065-webhook-claims': webhookClaims,
  '2026-11-27-0070-passkeys': passkeys,
  '2026-11-27-0080-webhook-row-versions': webhookRowVersions,
  '2026-11-27-0085-webhook-own-claims': webhookOwnClaims,
  '2026-11-29-0020-webhook-direct-deliveries': webhookDirectDeliveries,
  '2026-11-29-0021-nfkc-usernames': nfkcUsernames,
  '2026-11-29-0060-user-search': userSearch,
  '2026-11-29-0100-audit-log': auditLog,
  '2026-11-29-0160-console-client-id': consoleClientId,
  '2026-11-29-0180-users-locked': usersLocked,
};
