/**
 * Every audit event the service records, with its fields: the one list. Each is one log line
 * (`"audit": true`, `event` = its type, then its fields) and, with webhooks, the `data` of a
 * delivery whose `type` is the event's. Field names are wire names (snake_case); a field holds
 * names and ids, never a secret. The README's table of audit events lists exactly these types
 * (a test compares them).
 */

/** Tokens were issued at the token endpoint. */
export interface TokenIssued {
  type: 'token_issued';
  grant: 'authorization_code' | 'client_credentials' | 'refresh_token';
  client_id: string;
  /** The user the tokens are about (authorization code grant). */
  user_id?: string;
  /** A refresh token was issued too (authorization code grant). */
  refresh?: boolean;
  /** The refresh token family that was rotated (refresh token grant). */
  family_id?: string;
}

/**
 * A rotated-out refresh token came back after the grace window: the family and the access
 * tokens issued from it are revoked. Only the request that revoked the family reports it.
 */
export interface RefreshTokenReuseDetected {
  type: 'refresh_token_reuse_detected';
  client_id: string;
  family_id: string;
  /** When the token presented was rotated out (RFC 3339). */
  rotated_at: string;
  /** When it came back (RFC 3339). */
  reused_at: string;
  access_tokens_revoked: number;
}

/** An authorization code was redeemed a second time: what the first redemption issued is revoked. */
export interface CodeReuseDetected {
  type: 'code_reuse_detected';
  /** The access token the first redemption issued. */
  jti: string;
  /** Its refresh token family, if it issued one. */
  family_id: string | null;
}

/** A client revoked one of its tokens at the revocation endpoint (RFC 7009). */
export interface TokenRevoked {
  type: 'token_revoked';
  kind: 'access_token' | 'refresh_token';
  client_id: string;
  jti?: string;
  family_id?: string;
}

/**
 * A client failed to authenticate at the token, introspection or revocation endpoint (the
 * client is only told `invalid_client`), or a public client tried to introspect.
 */
export interface ClientAuthenticationFailed {
  type: 'client_authentication_failed';
  reason: 'unknown_client' | 'bad_secret' | 'expired_secret' | 'disabled' | 'no_credentials' | 'malformed_credentials' | 'public_client';
  /** The client id as presented (cut to a length a log line can carry), if any was. */
  client_id: string | undefined;
}

/** A user signed out at the end-session endpoint. */
export interface Logout {
  type: 'logout';
  user_id: string | null;
  client_id: string | null;
}

/** A sign-in attempt at the password or authenticator code step, and each completed sign-in. */
export interface SignIn {
  type: 'sign_in';
  result: 'success' | 'failure' | 'throttled';
  /** The step a failure or throttle happened at: the password, the authenticator code, a passkey, a recovery code. */
  step?: 'password' | 'otp' | 'passkey' | 'recovery_code';
  /** Why a failure failed: `invalid_credentials`, `locked`, `unavailable` or `wrong_code`. */
  reason?: string;
  /** The account name typed, as the sign-in source reads it; never the password. */
  username: string;
  /** Once the user is known. */
  user_id?: string;
  amr?: readonly string[];
}

/**
 * A passkey answered with a signature counter not above the one last seen (and not both zero):
 * the key may have been cloned, or an assertion replayed. The sign-in is refused.
 */
export interface PasskeyCounterRegressed {
  type: 'passkey_counter_regressed';
  user_id: string;
  /** The passkey's factor id (never its credential or key). */
  factor_id: string;
  /** The counter last seen and the one presented. */
  stored_count: number;
  presented_count: number;
}

/**
 * Who changed signing keys: the rotation schedule of a running server, the command line, the
 * administration API (whose request's line names the calling client), or the administration
 * console (with the administrator's `admin_sub`).
 */
export type KeyActor = 'schedule' | 'cli' | 'api' | 'console';

/** A new signing key is published in the JWKS ahead of its use (by the rotation schedule). */
export interface KeyPublished {
  type: 'key_published';
  kid: string;
  actor: KeyActor;
  /** The administrator's `sub`, when the console made it. */
  admin_sub?: string;
}

/** A signing key became the current signer: by schedule, or `idp keys rotate`. */
export interface KeyRotated {
  type: 'key_rotated';
  kid: string;
  actor: KeyActor;
  /** The administrator's `sub`, when the console made it. */
  admin_sub?: string;
}

/** A signing key was retired (no longer published): by schedule, or `idp keys retire`. */
export interface KeyRetired {
  type: 'key_retired';
  kid: string;
  actor: KeyActor;
  /** The administrator's `sub`, when the console made it. */
  admin_sub?: string;
}

/**
 * An administrator changed a client, user, API scope, the database from a seed file, or resealed
 * the master secret's values: one event per change made from the command line (`actor` `cli`) or
 * the administration API (`actor` `api`, with the calling client's `client_id`).
 */
export interface AdminChange {
  type: 'admin_change';
  actor: 'cli' | 'api' | 'console';
  /** The administration API's caller. */
  client_id?: string;
  /** The administration console's signed-in administrator (their `sub`). */
  admin_sub?: string;
  action: 'create' | 'update' | 'delete' | 'seed' | 'import' | 'reseal';
  resource: 'client' | 'user' | 'api_scope' | 'seed_file' | 'import_file' | 'sealed_values' | 'webhook';
  /** The client id, the user's `sub`, the scope's name, the seed file's path, the webhook endpoint's id. */
  resource_id: string;
  /** The names of the fields written, never their values. */
  fields: readonly string[];
}

/** The kinds of second factor (as `user_factors.kind` names them). */
export type SecondFactorKind = 'totp' | 'recovery_code' | 'passkey';

/** A user enrolled a second factor (at sign-in, or on the account page). */
export interface MfaAdded {
  type: 'mfa_added';
  user_id: string;
  kind: SecondFactorKind;
}

/**
 * Second factors of a user were removed: by the user (`actor` `user`), or by an administrator
 * (`cli`, `api`: `idp users reset-mfa`, which removes them all, recovery codes included).
 */
export interface MfaRemoved {
  type: 'mfa_removed';
  user_id: string;
  /** The kinds removed, each once. */
  kinds: readonly SecondFactorKind[];
  actor: 'user' | 'cli' | 'api' | 'console';
}

/** A new set of recovery codes was stored for a user; the previous set no longer works. */
export interface RecoveryCodesGenerated {
  type: 'recovery_codes_generated';
  user_id: string;
  count: number;
}

/** A recovery code was used as the second factor of a sign-in (it works once). */
export interface RecoveryCodeUsed {
  type: 'recovery_code_used';
  user_id: string;
  /** The user's recovery codes left unused. */
  remaining: number;
}

/**
 * Someone asked for a password recovery code ("Forgot password"). The page answers the same
 * whatever was typed; the event says what happened: `sent` (a code was mailed), `no_account`
 * (no local account with an address matched what was typed) or `limited` (the account was sent
 * its most messages for the hour). Never the code, never what was typed.
 */
export interface PasswordRecoveryRequested {
  type: 'password_recovery_requested';
  /** The account's `sub`, when one matched. */
  user_id: string | null;
  result: 'sent' | 'no_account' | 'limited';
}

/** A user set a new password: on the account page, after a password recovery, or because an administrator required it. */
export interface PasswordChanged {
  type: 'password_changed';
  user_id: string;
  via: 'account_page' | 'recovery' | 'required_change';
}

/**
 * A user removed an application's access on the account page: its consent forgotten, and its
 * refresh token families and access tokens for the user revoked.
 */
export interface AccessRemoved {
  type: 'access_removed';
  user_id: string;
  client_id: string;
}

/** A user changed their own profile on the account page (`fields`: the claims whose value changed, `name` among them when it followed). */
export interface ProfileUpdated {
  type: 'profile_updated';
  user_id: string;
  fields: string[];
}

/** A user signed their other browser sessions out on the account page (all, or one). */
export interface SessionsEnded {
  type: 'sessions_ended';
  user_id: string;
  /** How many browser sessions ended. */
  browser_sessions: number;
}

/**
 * The service disabled a webhook endpoint: it answered 410 Gone (`gone`), or every attempt to
 * it has failed for 5 days (`failing`). An administrator enables it again.
 */
export interface WebhookEndpointDisabled {
  type: 'webhook_endpoint_disabled';
  endpoint_id: string;
  reason: 'gone' | 'failing';
}

export type AuditEvent =
  | TokenIssued
  | RefreshTokenReuseDetected
  | CodeReuseDetected
  | TokenRevoked
  | ClientAuthenticationFailed
  | Logout
  | SignIn
  | PasskeyCounterRegressed
  | KeyPublished
  | KeyRotated
  | KeyRetired
  | AdminChange
  | MfaAdded
  | MfaRemoved
  | RecoveryCodesGenerated
  | RecoveryCodeUsed
  | PasswordRecoveryRequested
  | PasswordChanged
  | AccessRemoved
  | ProfileUpdated
  | SessionsEnded
  | WebhookEndpointDisabled;

export type AuditEventType = AuditEvent['type'];

/** A client id as a request presented it, audited: whatever was sent, cut to a length a log line can carry. */
export function presentedClientId(clientId: string): string {
  return clientId.slice(0, 200);
}

/** Every event type, in the order of the README's table; the compiler keeps it complete. */
export const AUDIT_EVENT_TYPES = Object.keys({
  token_issued: true,
  refresh_token_reuse_detected: true,
  code_reuse_detected: true,
  token_revoked: true,
  client_authentication_failed: true,
  logout: true,
  sign_in: true,
  passkey_counter_regressed: true,
  key_published: true,
  key_rotated: true,
  key_retired: true,
  admin_change: true,
  mfa_added: true,
  mfa_removed: true,
  recovery_codes_generated: true,
  recovery_code_used: true,
  password_recovery_requested: true,
  password_changed: true,
  access_removed: true,
  profile_updated: true,
  sessions_ended: true,
  webhook_endpoint_disabled: true,
} satisfies Record<AuditEventType, true>) as AuditEventType[];
