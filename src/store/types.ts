/**
 * The storage interfaces the rest of the service sees: durable data behind `DurableStore` (Kysely
 * over PostgreSQL or PGlite), short-lived data behind `EphemeralStore` and its stores of one
 * purpose each (Redis or an in-process map). Operations are named by intent and are atomic on
 * their own. The records they hold are in records.ts; the interfaces, one file per aggregate, in
 * contracts/. This index re-exports them, so an import from here keeps working.
 */
export type * from './contracts/shared.ts';
export type * from './contracts/clients.ts';
export type * from './contracts/users.ts';
export type * from './contracts/factors.ts';
export type * from './contracts/api-scopes.ts';
export type * from './contracts/consents.ts';
export type * from './contracts/signing-keys.ts';
export type * from './contracts/refresh-tokens.ts';
export type * from './contracts/revocations.ts';
export type * from './contracts/webhooks.ts';
export type * from './contracts/durable.ts';
export type * from './contracts/ephemeral-writes.ts';
export type * from './contracts/ephemeral.ts';
export type * from './contracts/codes.ts';
export type * from './contracts/attempts.ts';
export type * from './contracts/interactions.ts';
export type * from './contracts/idempotency-keys.ts';
export type * from './contracts/channels.ts';
export type * from './contracts/audit-log.ts';
export { NAMESPACES, type Namespace } from './ephemeral/namespaces.ts';
export type { ClaimedAttempt, AttemptOutcome, DeliveryNext, FinishedAttempt, OutboxEvent, WebhookDisabledReason } from './records.ts';
