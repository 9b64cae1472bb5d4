/** The rules of a deployment that span variables: what production demands, and settings that must agree. */
import type { Env, Problem } from './environment.ts';
import { isUnset } from './sign-in.ts';
import { baseUrlHost, rpIdProblem } from './webauthn.ts';

const PRODUCTION_DEMANDS: ReadonlyArray<readonly [string, string]> = [
  ['IDP_SECRET', 'is required when NODE_ENV=production (generated secrets are for development only)'],
  ['DATABASE_URL', 'is required when NODE_ENV=production (the embedded database is for development only)'],
  ['REDIS_URL', 'is required when NODE_ENV=production (the in-process store serves one instance only)'],
  ['IDP_BASE_URL', 'is required when NODE_ENV=production (the https URL clients and browsers use)'],
];

/** The management port of production unless IDP_MANAGEMENT_PORT says otherwise (the Prometheus exporters' 9464). */
export const PRODUCTION_MANAGEMENT_PORT = 9464;

/**
 * IDP_MANAGEMENT_PORT, or 9464 in production: the metrics name every client and its traffic, so
 * in production they are never on the public port (0: a port the system chooses).
 */
export function managementPortOf(env: Pick<Env, 'NODE_ENV' | 'IDP_MANAGEMENT_PORT'>): number | undefined {
  return env.IDP_MANAGEMENT_PORT ?? (env.NODE_ENV === 'production' ? PRODUCTION_MANAGEMENT_PORT : undefined);
}

/** What production demands and is unset, read from the raw environment or the parsed one alike. */
export function missingInProduction(env: Record<string, unknown>): Problem[] {
  if (String(env.NODE_ENV ?? '').trim() !== 'production') return [];
  return PRODUCTION_DEMANDS.filter(([variable]) => isUnset(env[variable])).map(([variable, message]) => ({ variable, message }));
}

/** Production's demands, then settings that must agree with each other. */
export function deploymentProblems(env: Env): Problem[] {
  const problems = missingInProduction(env);
  if (env.NODE_ENV === 'production' && env.IDP_BASE_URL?.startsWith('http:') && !env.IDP_ALLOW_HTTP) {
    problems.push({ variable: 'IDP_BASE_URL', message: 'must use https when NODE_ENV=production (set IDP_ALLOW_HTTP=1 to allow http)' });
  }
  if (env.IDP_SECRET_PREVIOUS.length > 0 && !env.IDP_SECRET) {
    problems.push({ variable: 'IDP_SECRET', message: 'is required when IDP_SECRET_PREVIOUS is set (the current secret, which seals everything new)' });
  }
  if (env.IDP_DATABASE_LISTEN_URL && !env.DATABASE_URL) {
    problems.push({ variable: 'IDP_DATABASE_LISTEN_URL', message: 'needs DATABASE_URL (the embedded database has no separate listen connection)' });
  }
  if (env.IDP_REFRESH_TOKEN_IDLE_LIFETIME > env.IDP_REFRESH_TOKEN_ABSOLUTE_LIFETIME) {
    problems.push({ variable: 'IDP_REFRESH_TOKEN_IDLE_LIFETIME', message: 'must not exceed IDP_REFRESH_TOKEN_ABSOLUTE_LIFETIME' });
  }
  if (env.IDP_ADMIN_API === 'management' && managementPortOf(env) === undefined) {
    problems.push({ variable: 'IDP_ADMIN_API', message: 'management needs IDP_MANAGEMENT_PORT (the port the administration API is then served on)' });
  }
  if (env.IDP_KEY_PUBLISH_AHEAD >= env.IDP_KEY_ROTATION_INTERVAL) {
    problems.push({ variable: 'IDP_KEY_PUBLISH_AHEAD', message: 'must be shorter than IDP_KEY_ROTATION_INTERVAL' });
  }
  const rpId = env.IDP_WEBAUTHN_RP_ID && rpIdProblem(baseUrlHost(env.IDP_BASE_URL ?? 'http://localhost'), env.IDP_WEBAUTHN_RP_ID);
  if (rpId) problems.push({ variable: 'IDP_WEBAUTHN_RP_ID', message: rpId });
  return problems;
}
