/**
 * Other providers' exports as they document them, with password hashes computed here: a
 * Keycloak realm export (`kc.sh export`: credentials' `secretData`/`credentialData` as JSON
 * strings) and Auth0's user export (one JSON object a line, bcrypt `passwordHash`).
 */
import { pbkdf2Sync, randomBytes, randomUUID } from 'node:crypto';
import { hash as argon2 } from '@node-rs/argon2';
import { hashSync as bcryptSync } from '@node-rs/bcrypt';

export interface KeycloakPassword {
  algorithm: 'pbkdf2' | 'pbkdf2-sha256' | 'pbkdf2-sha512' | 'argon2';
  iterations: number;
}

/** Keycloak's `password` credential for `password`, hashed as Keycloak hashes it. */
export async function keycloakPasswordCredential(password: string, { algorithm, iterations }: KeycloakPassword): Promise<object> {
  const salt = randomBytes(16);
  let value: Buffer;
  let additionalParameters: Record<string, string[]> = {};
  if (algorithm === 'argon2') {
    // Keycloak's argon2 defaults: id, version 1.3, 7 MiB, 5 iterations, 1 lane, 32 bytes.
    const phc = await argon2(password, { algorithm: 2, memoryCost: 7168, timeCost: iterations, parallelism: 1, salt });
    value = Buffer.from(phc.split('$').at(-1) ?? '', 'base64');
    additionalParameters = { hashLength: ['32'], memory: ['7168'], type: ['id'], version: ['1.3'], parallelism: ['1'] };
  } else {
    const digest = algorithm === 'pbkdf2' ? 'sha1' : algorithm.slice('pbkdf2-'.length);
    value = pbkdf2Sync(password, salt, iterations, digest === 'sha512' ? 64 : 32, digest);
  }
  return {
    id: randomUUID(), type: 'password', userLabel: 'My password', createdDate: 1700000000000,
    secretData: JSON.stringify({ value: value.toString('base64'), salt: salt.toString('base64'), additionalParameters: {} }),
    credentialData: JSON.stringify({ hashIterations: iterations, algorithm, additionalParameters }),
  };
}

/** Keycloak's `otp` credential: the secret is the text whose UTF-8 bytes the app got in base32. */
export function keycloakOtpCredential(secretText: string, digits = 6): object {
  return {
    id: randomUUID(), type: 'otp', userLabel: 'Phone', createdDate: 1700000000000,
    secretData: JSON.stringify({ value: secretText }),
    credentialData: JSON.stringify({ subType: 'totp', digits, counter: 0, period: 30, algorithm: 'HmacSHA1' }),
  };
}

export interface KeycloakUserSpec {
  username: string;
  credentials: object[];
  email?: string;
  firstName?: string;
  lastName?: string;
  enabled?: boolean;
  realmRoles?: string[];
  requiredActions?: string[];
  id?: string;
}

export function keycloakUser(spec: KeycloakUserSpec): object {
  return {
    id: spec.id ?? randomUUID(), createdTimestamp: 1700000000000, username: spec.username, enabled: spec.enabled ?? true, totp: false,
    emailVerified: spec.email !== undefined, firstName: spec.firstName, lastName: spec.lastName, email: spec.email,
    credentials: spec.credentials, disableableCredentialTypes: [], requiredActions: spec.requiredActions ?? [],
    realmRoles: spec.realmRoles ?? ['default-roles-shop'], notBefore: 0, groups: [],
  };
}

/** A confidential client as Keycloak exports it (its redirect URIs exact, as the service asks). */
export function keycloakClient(clientId: string, redirectUri: string, secret: string): object {
  return {
    id: randomUUID(), clientId, name: `${clientId} app`, enabled: true, clientAuthenticatorType: 'client-secret', secret,
    redirectUris: [redirectUri], webOrigins: ['+'], bearerOnly: false, consentRequired: false, standardFlowEnabled: true,
    implicitFlowEnabled: false, directAccessGrantsEnabled: false, serviceAccountsEnabled: true, publicClient: false, protocol: 'openid-connect',
    attributes: { 'post.logout.redirect.uris': `${new URL(redirectUri).origin}/##${new URL(redirectUri).origin}/bye`, 'pkce.code.challenge.method': 'S256' },
    defaultClientScopes: ['web-origins', 'acr', 'profile', 'roles', 'email'], optionalClientScopes: ['address', 'phone', 'offline_access', 'microprofile-jwt'],
  };
}

/** A realm export (one realm) around its users and clients, with the built-in clients every realm has. */
export function keycloakRealm(users: object[], clients: object[] = []): object {
  return {
    id: randomUUID(), realm: 'shop', enabled: true, sslRequired: 'external', passwordPolicy: 'length(8)',
    roles: { realm: [{ name: 'buyer' }, { name: 'default-roles-shop' }] },
    clients: [{ clientId: 'account', redirectUris: ['/realms/shop/account/*'], publicClient: true }, { clientId: 'admin-cli', publicClient: true }, ...clients],
    users,
    smtpServer: {}, eventsEnabled: false,
  };
}

/** A user of Auth0's export, its password hashed by bcrypt (cost 10, as Auth0 does; lower costs for speed). */
export function auth0User(fields: { email: string; password: string; username?: string; given_name?: string; family_name?: string; cost?: number }): object {
  const { password, cost, ...rest } = fields;
  return {
    user_id: `auth0|${randomBytes(12).toString('hex')}`, email_verified: true, ...rest,
    passwordHash: bcryptSync(password, cost ?? 10), created_at: '2024-01-02T03:04:05.000Z',
  };
}
