/**
 * Clients, users, API scopes and signing keys as JSON documents, by their wire names (the
 * `clients` table's columns, OpenID Connect claims): what `idp … --json` prints and what the
 * administration API answers. A hash, a secret, a TOTP secret or a recovery code is never in one:
 * only whether a secret is set and when it expires, which second factors a user has, a key's
 * public members. Their shapes are answer-schemas.ts's, which the OpenAPI document describes.
 */
import { hasSecondFactor, type ApiScopeRecord, type ClientRecord, type SigningKeyRecord, type UserRecord } from '../store/records.ts';
import { clientType } from './clients.ts';
import { summariseFactors } from './second-factors.ts';
import { publicJwkWire, type ApiScopeWire, type ClientWire, type KeyWire, type UserWire } from './answer-schemas.ts';

export function clientDocument(client: ClientRecord): ClientWire {
  return {
    client_id: client.clientId,
    display_name: client.displayName,
    enabled: client.enabled,
    client_type: clientType(client),
    has_secret: client.secretHash !== null,
    secret_expires_at: client.secretExpiresAt?.toISOString() ?? null,
    previous_secret_expires_at: client.previousSecret?.expiresAt.toISOString() ?? null,
    grant_types: client.grantTypes,
    scopes: client.scopes,
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris,
    cors_origins: client.corsOrigins,
    access_token_lifetime: client.accessTokenLifetime,
    require_consent: client.requireConsent,
  };
}

export function userDocument(user: UserRecord): UserWire {
  return {
    id: user.id,
    sub: user.subject,
    source: user.source,
    username: user.username,
    given_name: user.givenName,
    family_name: user.familyName,
    name: user.name,
    email: user.email,
    email_verified: user.emailVerified,
    phone_number: user.phoneNumber,
    phone_number_verified: user.phoneNumberVerified,
    roles: user.roles,
    locked: user.locked,
    must_change_password: user.mustChangePassword,
    must_enrol_mfa: user.mustEnrolMfa,
    // Any second factor of its own: an authenticator app or a passkey (recovery codes stand in).
    mfa_enrolled: hasSecondFactor(user),
    second_factors: summariseFactors(user),
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
  };
}

export function apiScopeDocument(scope: ApiScopeRecord): ApiScopeWire {
  return { name: scope.name, created_at: scope.createdAt.toISOString() };
}

export function keyDocument(key: SigningKeyRecord): KeyWire {
  return {
    kid: key.kid,
    alg: key.alg,
    state: key.state,
    created_at: key.createdAt.toISOString(),
    activated_at: key.activatedAt?.toISOString() ?? null,
    retired_at: key.retiredAt?.toISOString() ?? null,
    // Only the members the schema names (the public ones) are kept: a private member never leaves.
    public_jwk: publicJwkWire.parse(key.publicJwk),
  };
}
