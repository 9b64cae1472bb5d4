/**
 * What the administration API answers, as zod schemas by wire names: the one description of each
 * answer's body, from which the OpenAPI document's `components.schemas` are made (under the names
 * `wireSchemas` gives them) and by which the documents' types are inferred, so that what the code
 * returns and what the document says cannot part. Objects are closed (`additionalProperties:
 * false` in the document): a member the code adds without describing it fails the API's tests.
 */
import { z } from 'zod';
import { GRANT_TYPES } from '../store/records.ts';

/** The answers' schemas by their name in the OpenAPI document (`#/components/schemas/{id}`). */
export const wireSchemas = z.registry<{ id: string }>();

function named<T extends z.ZodType>(id: string, schema: T): T {
  wireSchemas.add(schema, { id });
  return schema;
}

/** RFC 3339 in UTC, as `Date.prototype.toISOString` writes it. */
const timestamp = z.iso.datetime();
const names = z.array(z.string());

export const clientWire = named('Client', z.object({
  client_id: z.string(),
  display_name: z.string(),
  enabled: z.boolean(),
  client_type: z.enum(['confidential', 'public']),
  has_secret: z.boolean(),
  secret_expires_at: timestamp.nullable(),
  previous_secret_expires_at: timestamp.nullable().describe('Until when the secret a rotation replaced is still accepted.'),
  grant_types: z.array(z.enum(GRANT_TYPES)),
  scopes: names,
  redirect_uris: names,
  post_logout_redirect_uris: names,
  cors_origins: names,
  access_token_lifetime: z.number().int().describe('Seconds.'),
  require_consent: z.boolean(),
}).describe('A client, by the clients table\'s columns: never a hash or a secret.'));

const secret = z.string().describe('Generated, shown in this answer only.');

export const createdClientWire = named('CreatedClient', clientWire.extend({ client_secret: secret.optional().describe('A confidential client\'s generated secret, in this answer only.') }));

export const clientWithSecretWire = named('ClientWithNewSecret', clientWire.extend({ client_secret: secret }));

export const secondFactorWire = named('SecondFactor', z.object({
  kind: z.enum(['totp', 'recovery_code', 'passkey']),
  name: z.string(),
  remaining: z.number().int().optional().describe('Recovery codes: how many are left unused.'),
  created_at: timestamp,
  last_used_at: timestamp.nullable(),
}).describe('A second factor as administrators see it (never a secret); a user\'s recovery codes are one entry.'));

export const userWire = named('User', z.object({
  id: z.string(),
  sub: z.string().describe('The sub claim; the {id} of /users/{id}.'),
  source: z.enum(['local', 'ldap', 'oidc']),
  username: z.string(),
  given_name: z.string().nullable(),
  family_name: z.string().nullable(),
  name: z.string().nullable(),
  email: z.string().nullable(),
  email_verified: z.boolean(),
  phone_number: z.string().nullable(),
  phone_number_verified: z.boolean(),
  roles: names,
  locked: z.boolean(),
  must_change_password: z.boolean(),
  must_enrol_mfa: z.boolean(),
  mfa_enrolled: z.boolean().describe('Has an authenticator app or a passkey.'),
  second_factors: z.array(secondFactorWire),
  created_at: timestamp,
  updated_at: timestamp,
}));

export const apiScopeWire = named('ApiScope', z.object({ name: z.string(), created_at: timestamp }));

/** RFC 7517 and RFC 7518 §6: the public members of an RSA or EC key; a private one is never here. */
export const publicJwkWire = z.object({
  kty: z.string(), kid: z.string().optional(), use: z.string().optional(), alg: z.string().optional(), key_ops: names.optional(),
  n: z.string().optional(), e: z.string().optional(), crv: z.string().optional(), x: z.string().optional(), y: z.string().optional(),
});

export const keyWire = named('SigningKey', z.object({
  kid: z.string(),
  alg: z.string(),
  state: z.enum(['next', 'current', 'previous', 'retired']),
  created_at: timestamp,
  activated_at: timestamp.nullable(),
  retired_at: timestamp.nullable(),
  public_jwk: publicJwkWire,
}));

export const rotatedKeyWire = named('RotatedKey', keyWire.extend({
  jwks_max_age: z.number().int().describe('Seconds relying parties may keep the key set they cached before, without the new key.'),
}));

export const retiredKeyWire = named('RetiredKey', keyWire.extend({
  invalidated_tokens_valid_until: timestamp.nullable().describe('Forced: until when tokens the key signed would have been valid (they no longer verify).'),
}));

export const webhookWire = named('Webhook', z.object({
  id: z.string(),
  url: z.string(),
  event_types: names.describe('Event types, or ["*"] for every one.'),
  enabled: z.boolean(),
  description: z.string(),
  disabled_reason: z.string().nullable().describe('Why the service disabled it (gone: it answered 410; failing: 5 days of failures); null otherwise.'),
  failing_since: timestamp.nullable(),
  previous_secret_expires_at: timestamp.nullable().describe('Until when the previous secret still signs beside the current one (after a secret change).'),
  created_at: timestamp,
  updated_at: timestamp,
}).describe('A webhook endpoint: never its secret.'));

export const webhookWithSecretWire = named('WebhookWithSecret', webhookWire.extend({
  secret: z.string().describe('whsec_ and the base64 of 32 random bytes, in this answer only.'),
}));

export const deliveryAttemptWire = named('DeliveryAttempt', z.object({
  delivery_id: z.string(),
  event_id: z.string(),
  event_type: z.string(),
  attempt: z.number().int(),
  started_at: timestamp,
  duration_ms: z.number().int().nullable(),
  status: z.number().int().nullable().describe('The HTTP status the endpoint answered.'),
  error: z.string().nullable().describe('The kind of error instead: timeout, redirect, refused_address, …'),
  delivery_state: z.enum(['pending', 'succeeded', 'failed']),
  next_attempt_at: timestamp.nullable(),
}).describe('One delivery attempt (never what the receiver answered).'));

export const webhookTestWire = named('WebhookTestSent', z.object({ event_id: z.string() }));

export const redeliveryWire = named('Redelivery', z.object({ delivery_id: z.string() }));

export const userSessionsWire = named('UserSessions', z.object({
  refresh_token_families: z.array(z.object({
    id: z.string(), client_id: z.string(), created_at: timestamp, last_used_at: timestamp, expires_at: timestamp,
  })),
  browser_sessions: z.array(z.object({
    id: z.string(), created_at: timestamp, auth_time: timestamp.nullable(), amr: names, clients: names.describe('The clients signed in through it.'),
  })),
}));

export const endedSessionsWire = named('EndedSessions', z.object({
  browser_sessions: z.number().int(), refresh_token_families: z.number().int(),
}).describe('How many sessions ended.'));

export const auditEventWire = named('AuditEvent', z.object({
  id: z.string().describe('The webhook id of the same event (webhook-id of its deliveries).'),
  type: z.string(),
  occurred_at: timestamp,
  data: z.record(z.string(), z.unknown()).describe('The event\'s fields: names and ids, never a secret.'),
}).describe('One event of the audit log.'));

const pages = new WeakSet<z.ZodType>();

/** Whether a schema is a list's page (whose answer carries `Link: <…>; rel="next"` while there is more). */
export const isPageWire = (schema: z.ZodType): boolean => pages.has(schema);

/** A page of a list: `items` in the list's order, and the cursor of the next page (null on the last). */
export function pageWire<T extends z.ZodType>(id: string, item: T) {
  const page = named(id, z.object({
    items: z.array(item),
    next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page.'),
    total: z.number().int().optional().describe('With count=true: the number of items of every page together.'),
  }));
  pages.add(page);
  return page;
}

export const clientPageWire = pageWire('ClientPage', clientWire);
export const userPageWire = pageWire('UserPage', userWire);
export const apiScopePageWire = pageWire('ApiScopePage', apiScopeWire);
export const keyPageWire = pageWire('SigningKeyPage', keyWire);
export const webhookPageWire = pageWire('WebhookPage', webhookWire);
export const deliveryAttemptPageWire = pageWire('DeliveryAttemptPage', deliveryAttemptWire);
export const auditEventPageWire = pageWire('AuditEventPage', auditEventWire);

/** RFC 9457 problem details: what every refused call answers (`application/problem+json`). */
export const problemWire = named('Problem', z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  errors: z.array(z.union([
    z.object({ pointer: z.string().describe('A JSON pointer into the request body (RFC 6901).'), detail: z.string() }),
    z.object({ parameter: z.string().describe('A query parameter or header.'), detail: z.string() }),
  ])).optional().describe('Each wrong field of a malformed request.'),
}).describe('RFC 9457 problem details'));

export type ClientWire = z.infer<typeof clientWire>;
export type UserWire = z.infer<typeof userWire>;
export type ApiScopeWire = z.infer<typeof apiScopeWire>;
export type KeyWire = z.infer<typeof keyWire>;
export type WebhookWire = z.infer<typeof webhookWire>;
export type DeliveryAttemptWire = z.infer<typeof deliveryAttemptWire>;
export type SecondFactorWire = z.infer<typeof secondFactorWire>;
export type UserSessionsWire = z.infer<typeof userSessionsWire>;
export type ProblemWire = z.infer<typeof problemWire>;
