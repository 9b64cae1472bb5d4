/**
 * The database's constraints are the last line of defence behind the administrative rules: a
 * violation becomes one AdminError naming what was refused, never a stack trace.
 */
import { AdminError } from './errors.ts';
import { RULE_MESSAGES } from './rules.ts';

// PostgreSQL SQLSTATE codes (Appendix A of the PostgreSQL manual).
const CHECK_VIOLATION = '23514';
const UNIQUE_VIOLATION = '23505';
const NOT_NULL_VIOLATION = '23502';

/** What each constraint means, in the words of the error line. */
const CONSTRAINT_RULES: Record<string, string> = {
  clients_client_id_format: 'the client id must be 1 to 200 visible ASCII characters',
  clients_client_id_not_reserved: `the client id ${RULE_MESSAGES.reservedClientId}`,
  clients_secret_hash_format: 'the secret hash must be as printed by idp secret-hash',
  clients_grant_types_known: 'grant types must be authorization_code, refresh_token or client_credentials',
  clients_scopes_format: 'scopes must be RFC 6749 scope tokens',
  clients_redirect_uris_format: 'redirect URIs must be https, http on a loopback address, or a private-use scheme with a period, without a fragment',
  clients_post_logout_redirect_uris_format: 'post-logout redirect URIs must be https, http on a loopback address, or a private-use scheme with a period, without a fragment',
  clients_cors_origins_format: 'CORS origins must be scheme://host[:port]',
  clients_access_token_lifetime_positive: 'the access token lifetime must be a positive number of seconds',
  clients_client_credentials_confidential: RULE_MESSAGES.publicClientCredentials,
  clients_previous_secret_hash_format: 'the previous secret hash must be as printed by idp secret-hash',
  clients_previous_secret_complete: 'a previous secret needs both its hash and its expiry',
  clients_previous_secret_confidential: 'a public client holds no previous secret (clear previous_secret_hash and previous_secret_expires_at first)',
  users_subject_not_empty: 'the subject must not be empty',
  users_username_not_empty: 'the username must not be empty',
  users_local_username_canonical: 'a local username is stored trimmed and in lower case, as sign-in looks it up',
  users_source_known: 'the source must be local, ldap or oidc',
  api_scopes_name_format: 'an API scope name must be an RFC 6749 scope token',
};

interface PostgresError {
  code?: unknown;
  constraint?: unknown;
  column?: unknown;
}

/** The AdminError for a constraint violation, or undefined for any other error. */
export function constraintViolation(error: unknown, subject: string): AdminError | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, constraint, column } = error as PostgresError;
  if (code === UNIQUE_VIOLATION) return new AdminError('conflict', `${subject} already exists`);
  if (code === CHECK_VIOLATION) {
    const rule = typeof constraint === 'string' ? CONSTRAINT_RULES[constraint] : undefined;
    return new AdminError('invalid', `${subject} refused by the database: ${rule ?? `constraint ${String(constraint)} is violated`}`);
  }
  if (code === NOT_NULL_VIOLATION) return new AdminError('invalid', `${subject} refused by the database: ${String(column)} is required`);
  return undefined;
}

/** Runs a write; a constraint violation becomes an AdminError naming `subject` (e.g. "client web"). */
export async function refuseConstraintViolations<T>(subject: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    throw constraintViolation(error, subject) ?? error;
  }
}
