/** The sign-in source (IDP_SIGN_IN_SOURCE) and what each needs, from the environment. */
import type { Env, Problem } from './environment.ts';
import { isLoopbackHost } from './values.ts';

/** The deployment's one sign-in source, with everything it needs (IDP_SIGN_IN_SOURCE). */
export type SignIn =
  | { readonly source: 'local' }
  | { readonly source: 'ldap'; readonly ldap: ReturnType<typeof ldapOf> }
  | { readonly source: 'oidc'; readonly upstream: ReturnType<typeof upstreamOf> };

/** The sign-in source in force, or every variable it needs that is unset. */
export function signInOf(env: Env): SignIn | Problem[] {
  const missing = missingForSource(env);
  if (missing.length > 0) return missing;
  if (env.IDP_SIGN_IN_SOURCE === 'ldap') return Object.freeze({ source: 'ldap', ldap: ldapOf(env, env.IDP_LDAP_URL ?? '', env.IDP_LDAP_BASE_DN ?? '') });
  if (env.IDP_SIGN_IN_SOURCE === 'oidc') return Object.freeze({ source: 'oidc', upstream: upstreamOf(env, env.IDP_UPSTREAM_ISSUER ?? '', env.IDP_UPSTREAM_CLIENT_ID ?? '') });
  return Object.freeze({ source: 'local' });
}

/** What each outside source cannot work without. */
const REQUIRED_BY_SOURCE: Record<string, readonly string[]> = {
  ldap: ['IDP_LDAP_URL', 'IDP_LDAP_BASE_DN'],
  oidc: ['IDP_UPSTREAM_ISSUER', 'IDP_UPSTREAM_CLIENT_ID'],
};

export const isUnset = (value: unknown) => value === undefined || (typeof value === 'string' && value.trim() === '');

/** The variables the sign-in source needs and that are unset, from the raw environment or the parsed one alike. */
export function missingForSource(env: Record<string, unknown>): Problem[] {
  const source = String(env.IDP_SIGN_IN_SOURCE ?? '');
  return (REQUIRED_BY_SOURCE[source] ?? [])
    .filter((variable) => isUnset(env[variable]))
    .map((variable) => ({ variable, message: `is required when IDP_SIGN_IN_SOURCE=${source}` }));
}

/** The directory the passwords are checked against (IDP_LDAP_*). */
function ldapOf(env: Env, url: string, baseDn: string) {
  return Object.freeze({
    url,
    bindDn: env.IDP_LDAP_BIND_DN,
    bindPassword: env.IDP_LDAP_BIND_PASSWORD,
    baseDn,
    userFilter: env.IDP_LDAP_USER_FILTER,
    roleAttribute: env.IDP_LDAP_ROLE_ATTRIBUTE,
    /** Upgrade an ldap:// connection with StartTLS before anything is sent. */
    startTls: env.IDP_LDAP_STARTTLS,
    /** PEM file of the CA that signed the directory's certificate; unset: the system CAs. */
    caFile: env.IDP_LDAP_CA_FILE,
  });
}

/** The OpenID provider users are sent to (IDP_UPSTREAM_*). */
function upstreamOf(env: Env, issuer: string, clientId: string) {
  return Object.freeze({ issuer, clientId, clientSecret: env.IDP_UPSTREAM_CLIENT_SECRET });
}

const INSECURE_SOURCE_HINT = 'when NODE_ENV=production (set IDP_ALLOW_INSECURE_SOURCE=1 to allow it)';

/**
 * In production the passwords typed in (LDAP bind) and the upstream's tokens must not cross the
 * network in cleartext: an http upstream is allowed on loopback only, ldap:// only with StartTLS.
 */
export function cleartextSource(env: Env, signIn: SignIn): Problem | undefined {
  if (env.NODE_ENV !== 'production' || env.IDP_ALLOW_INSECURE_SOURCE) return undefined;
  if (signIn.source === 'oidc') {
    const upstream = new URL(signIn.upstream.issuer);
    if (upstream.protocol === 'http:' && !isLoopbackHost(upstream.hostname)) {
      return { variable: 'IDP_UPSTREAM_ISSUER', message: `must use https (or http on a loopback address) ${INSECURE_SOURCE_HINT}` };
    }
  }
  if (signIn.source === 'ldap' && signIn.ldap.url.toLowerCase().startsWith('ldap:') && !signIn.ldap.startTls) {
    return { variable: 'IDP_LDAP_URL', message: `must use ldaps:// or IDP_LDAP_STARTTLS=1 ${INSECURE_SOURCE_HINT}` };
  }
  return undefined;
}

/** The variables only each sign-in source reads. */
const SOURCE_VARIABLES: Record<SignIn['source'], RegExp | undefined> = {
  local: undefined,
  ldap: /^IDP_LDAP_/,
  oidc: /^IDP_UPSTREAM_/,
};

/** Variables of another sign-in source than the one in force: set by mistake, or a source forgotten. */
export function unusedSettings(env: Record<string, string | undefined>, source: SignIn['source']): string[] {
  const warnings: string[] = [];
  for (const [other, pattern] of Object.entries(SOURCE_VARIABLES)) {
    if (other === source || !pattern) continue;
    const set = Object.keys(env).filter((name) => pattern.test(name) && (env[name] ?? '').trim() !== '').sort();
    if (set.length > 0) warnings.push(`${set.join(', ')} ${set.length === 1 ? 'is' : 'are'} set but IDP_SIGN_IN_SOURCE=${source}: ${set.length === 1 ? 'it does' : 'they do'} nothing unless IDP_SIGN_IN_SOURCE=${other}`);
  }
  return warnings;
}

