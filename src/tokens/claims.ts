/**
 * Which claims a user's tokens and userinfo carry (OpenID Connect Core 1.0 §5.4): each scope releases
 * its claims, only when the user has a value; the `claims` request parameter may name further
 * claims, released only when inside a scope the client may use and the user consented to.
 */
import type { UserRecord } from '../store/records.ts';

/** The claims each scope releases. `offline_access` and API scopes release none. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: ['name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'idp'],
  email: ['email', 'email_verified'],
  phone: ['phone_number', 'phone_number_verified'],
  roles: ['role'],
};

const CLAIM_SCOPE: ReadonlyMap<string, string> = new Map(
  Object.entries(SCOPE_CLAIMS).flatMap(([scope, claims]) => claims.map((claim) => [claim, scope] as const)),
);

/** The `claims` request parameter (OIDC Core §5.5), reduced to the claim names we read. */
export interface ClaimsRequest {
  id_token: string[];
  userinfo: string[];
}

/**
 * Parses the `claims` parameter: a JSON object with optional `id_token` and `userinfo` members,
 * each mapping claim names to null or an object (`essential`, `value`, `values` are ignored).
 * Returns undefined when the value is not of that shape.
 */
export function parseClaimsRequest(json: string): ClaimsRequest | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  const names = (member: unknown): string[] | undefined => {
    if (member === undefined) return [];
    if (!isObject(member)) return undefined;
    if (Object.values(member).some((v) => v !== null && !isObject(v))) return undefined;
    return Object.keys(member);
  };
  const idToken = names(value.id_token);
  const userinfo = names(value.userinfo);
  return idToken && userinfo ? { id_token: idToken, userinfo } : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value of one claim for a user, or undefined when the user has none. */
function claimValue(user: UserRecord, claim: string, idp: string): unknown {
  switch (claim) {
    case 'name': return user.name ?? undefined;
    case 'given_name': return user.givenName ?? undefined;
    case 'family_name': return user.familyName ?? undefined;
    case 'preferred_username': return user.username;
    case 'updated_at': return Math.floor(user.updatedAt.getTime() / 1000);
    case 'idp': return idp;
    case 'email': return user.email ?? undefined;
    case 'email_verified': return user.email ? user.emailVerified : undefined;
    case 'phone_number': return user.phoneNumber ?? undefined;
    case 'phone_number_verified': return user.phoneNumber ? user.phoneNumberVerified : undefined;
    case 'role': return user.roles.length > 0 ? user.roles : undefined;
    default: return undefined;
  }
}

export type RoleShape = 'jwt' | 'userinfo';

/** The requested claim names that lie inside one of `allowedScopes` (OpenID Connect Core 1.0 §5.5, the `claims` parameter). */
export function permittedClaims(requested: readonly string[] | undefined, allowedScopes: readonly string[]): string[] {
  return (requested ?? []).filter((claim) => {
    const scope = CLAIM_SCOPE.get(claim);
    return scope !== undefined && allowedScopes.includes(scope);
  });
}

/**
 * The user claims released by `scopes`, plus `extra` claim names already permitted. `role` is an
 * array in userinfo, and a single string in a JWT when the user has exactly one role.
 */
export function userClaims(
  user: UserRecord,
  options: { scopes: readonly string[]; extra?: readonly string[]; idp: string; roleShape: RoleShape },
): Record<string, unknown> {
  const names = new Set([...options.scopes.flatMap((scope) => SCOPE_CLAIMS[scope] ?? []), ...(options.extra ?? [])]);
  const claims: Record<string, unknown> = {};
  for (const name of names) {
    const value = claimValue(user, name, options.idp);
    if (value !== undefined) claims[name] = value;
  }
  const roles = claims.role as string[] | undefined;
  if (roles && options.roleShape === 'jwt' && roles.length === 1) claims.role = roles[0];
  return claims;
}

/** acr from amr: the strongest method used (README, Account protection). */
export function acrFor(amr: readonly string[]): string {
  if (amr.includes('external')) return 'urn:svc:ac:external';
  return amr.includes('mfa') ? 'urn:svc:ac:mfa' : 'urn:svc:ac:pwd';
}
