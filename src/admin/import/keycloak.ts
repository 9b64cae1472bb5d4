/**
 * `idp import FILE --format keycloak`: a realm export (`kc.sh export`, one realm), read as a
 * stream. Users keep their `id` as `sub`; clients become the service's clients. Keycloak's own
 * clients (the admin console's, the account console's) are left out.
 */
import type { Readable } from 'node:stream';
import { isObject, pointerOf, renamed, stringField, type EntryProblem, type ImportEntry } from './entries.ts';
import { jsonElements } from './json-stream.ts';
import { keycloakPasswordHash, keycloakTotpSecret } from './keycloak-credentials.ts';

/** The clients every Keycloak realm has: its own consoles and APIs, not applications. */
const BUILT_IN_CLIENTS = new Set(['account', 'account-console', 'admin-cli', 'broker', 'realm-management', 'security-admin-console']);

/** Keycloak's standard client scopes the service has too (`web-origins`, `acr` and the like have no counterpart). */
const SCOPES = new Set(['profile', 'email', 'phone', 'roles', 'offline_access']);

const USER_FIELDS = { username: 'username', email: 'email', emailVerified: 'email_verified', firstName: 'given_name', lastName: 'family_name', realmRoles: 'roles' };

interface Credentials {
  password_hash?: string;
  totp_secret?: string;
  origin: Record<string, string>;
  problems: EntryProblem[];
  notes: string[];
}

function readCredentials(credentials: unknown): Credentials {
  const found: Credentials = { origin: {}, problems: [], notes: [] };
  if (!Array.isArray(credentials)) return found;
  credentials.forEach((credential: unknown, i) => {
    if (!isObject(credential)) return;
    if (credential.type === 'password' && found.password_hash === undefined) {
      const hash = keycloakPasswordHash(credential);
      if (hash.ok) found.password_hash = hash.value;
      else found.problems.push({ field: pointerOf(['credentials', i, hash.field]), message: hash.message });
      found.origin.password_hash = pointerOf(['credentials', i]);
    } else if (credential.type === 'otp' && found.totp_secret === undefined) {
      const secret = keycloakTotpSecret(credential);
      // An authenticator the service cannot check is left out: the user is asked to enrol again.
      if (secret.ok) found.totp_secret = secret.value;
      else found.notes.push(`${pointerOf(['credentials', i, secret.field])}: not imported (${secret.message}); the user enrols an authenticator app again`);
      found.origin.totp_secret = pointerOf(['credentials', i, 'secretData']);
    }
  });
  return found;
}

export function keycloakUser(record: unknown, at: string): ImportEntry {
  if (!isObject(record)) return { type: 'user', at, name: '?', user: {}, subject: undefined, problems: [{ field: '', message: 'must be an object' }], origin: {}, notes: [] };
  const { fields, origin } = renamed(record, USER_FIELDS);
  const credentials = readCredentials(record.credentials);
  const actions = Array.isArray(record.requiredActions) ? record.requiredActions : [];
  const user: Record<string, unknown> = { ...fields };
  if (record.enabled === false) user.locked = true;
  if (actions.includes('UPDATE_PASSWORD')) user.must_change_password = true;
  if (actions.includes('CONFIGURE_TOTP') || credentials.notes.length > 0) user.must_enrol_mfa = true;
  if (credentials.password_hash !== undefined) user.password_hash = credentials.password_hash;
  if (credentials.totp_secret !== undefined) user.totp_secret = credentials.totp_secret;
  const problems = [...credentials.problems];
  if (credentials.origin.password_hash === undefined) problems.push({ field: '/credentials', message: 'has no password credential (a user of a federated directory or another provider signs in there)' });
  const subject = stringField(record, 'id');
  if (subject === undefined || subject === '') problems.push({ field: '/id', message: 'required (it becomes the sub)' });
  return {
    type: 'user', at, name: stringField(record, 'username') ?? '?', user, subject, problems, notes: credentials.notes,
    origin: { ...origin, ...credentials.origin, sub: '/id', locked: '/enabled', must_change_password: '/requiredActions', must_enrol_mfa: '/requiredActions' },
  };
}

const list = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** Keycloak's `+` in web origins and post-logout URIs: "the redirect URIs' (origins)". */
const originOf = (uri: string): string | undefined => {
  try {
    return new URL(uri).origin;
  } catch {
    return undefined;
  }
};

export function keycloakClient(record: unknown, at: string): ImportEntry {
  const base = { at, origin: {}, notes: [], problems: [] };
  if (!isObject(record)) return { ...base, type: 'client', name: '?', client: {}, problems: [{ field: '', message: 'must be an object' }] };
  const clientId = stringField(record, 'clientId') ?? '?';
  if (BUILT_IN_CLIENTS.has(clientId)) return { ...base, type: 'skip', kind: 'client', name: clientId, reason: "Keycloak's own client" };
  const redirectUris = list(record.redirectUris);
  const attributes = isObject(record.attributes) ? record.attributes : {};
  const postLogout = list(typeof attributes['post.logout.redirect.uris'] === 'string' ? attributes['post.logout.redirect.uris'].split('##') : []);
  const webOrigins = list(record.webOrigins).flatMap((o) => (o === '+' ? redirectUris.map(originOf).filter((v) => v !== undefined) : [o]));
  const grants = [
    ...(record.standardFlowEnabled !== false ? ['authorization_code', 'refresh_token'] : []),
    ...(record.serviceAccountsEnabled === true ? ['client_credentials'] : []),
  ];
  const scopes = ['openid', ...[...list(record.defaultClientScopes), ...list(record.optionalClientScopes)].filter((s) => SCOPES.has(s))];
  const client: Record<string, unknown> = {
    client_id: clientId,
    display_name: stringField(record, 'name') ?? clientId,
    enabled: record.enabled !== false,
    client_secret: record.publicClient === true ? null : record.secret,
    grant_types: grants,
    scopes: [...new Set(scopes)],
    redirect_uris: redirectUris,
    post_logout_redirect_uris: [...new Set(postLogout.flatMap((u) => (u === '+' ? redirectUris : [u])))],
    cors_origins: [...new Set(webOrigins)],
  };
  const origin = {
    client_id: '/clientId', display_name: '/name', enabled: '/enabled', client_secret: '/secret', grant_types: '/standardFlowEnabled',
    scopes: '/defaultClientScopes', redirect_uris: '/redirectUris', post_logout_redirect_uris: pointerOf(['attributes', 'post.logout.redirect.uris']), cors_origins: '/webOrigins',
  };
  return { ...base, type: 'client', name: clientId, client, origin };
}

/** The users and clients of a realm export, in file order. */
export async function* keycloakEntries(input: Readable): AsyncGenerator<ImportEntry> {
  for await (const { section, index, value } of jsonElements(input, ['users', 'clients'])) {
    const at = pointerOf([section, index]);
    yield section === 'users' ? keycloakUser(value, at) : keycloakClient(value, at);
  }
}
