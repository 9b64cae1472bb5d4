/** Scope syntax and the scopes with a fixed meaning. A leaf: anyone may import it. */
import { OAuthError } from './errors.ts';

/** Scopes that release claims or tokens in OpenID Connect; never API scopes. */
export const OIDC_SCOPES: ReadonlySet<string> = new Set(['openid', 'offline_access', 'profile', 'email', 'phone', 'roles']);

/** The administration scopes belong to the service itself, not to applications: the authorization endpoint refuses them (README, Endpoints). */
export const SERVICE_SCOPES: ReadonlySet<string> = new Set(['admin_api', 'admin_api_readonly', 'admin_console_webhooks']);

/** A scope the service defines itself: never an API scope, granted whatever `api_scopes` says. */
export function isStandardScope(scope: string): boolean {
  return OIDC_SCOPES.has(scope) || SERVICE_SCOPES.has(scope);
}

/** RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ). */
export const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** Splits a scope parameter (RFC 6749 §3.3), dropping repeats and keeping the order. */
export function parseScope(scope: string | undefined): string[] {
  if (scope === undefined) return [];
  const scopes = scope.split(' ').filter((s) => s !== '');
  if (scopes.some((s) => !SCOPE_TOKEN.test(s))) throw new OAuthError('invalid_scope', 'The scope parameter is malformed.');
  return [...new Set(scopes)];
}
