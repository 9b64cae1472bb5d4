/**
 * The embedded default's demo data: on an empty database, one confidential client and one user,
 * whose credentials are printed once (the README's first section). Never in production. The user
 * is an administrator (role idp-admin) of the console, whose address the banner names.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.ts';
import { hashPassword } from '../sources/passwords.ts';
import type { DurableStore } from '../store/types.ts';
import { hashClientSecret, randomToken } from '../tokens/opaque.ts';

export interface DemoCredentials {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  username: string;
  password: string;
}

export const DEMO_API_SCOPE = 'demo.read';

/** Creates the demo client and user when the database holds no client and no user. */
export async function ensureDemoData(durable: DurableStore): Promise<DemoCredentials | undefined> {
  if ((await durable.clients.count()) > 0 || (await durable.users.count()) > 0) return undefined;
  const demo: DemoCredentials = {
    clientId: 'demo',
    clientSecret: randomToken(),
    redirectUri: 'http://localhost:8080/callback',
    username: 'demo',
    password: randomBytes(12).toString('base64url'),
  };
  const passwordHash = await hashPassword(demo.password);
  const userId = randomToken(16);
  await durable.transaction(async (tx) => {
    await tx.apiScopes.add(DEMO_API_SCOPE);
    await tx.clients.upsert({
      clientId: demo.clientId,
      displayName: 'Demo application',
      enabled: true,
      secretHash: hashClientSecret(demo.clientSecret),
      secretExpiresAt: null,
      grantTypes: ['authorization_code', 'refresh_token', 'client_credentials'],
      scopes: ['openid', 'profile', 'email', 'phone', 'roles', 'offline_access', DEMO_API_SCOPE],
      redirectUris: [demo.redirectUri],
      postLogoutRedirectUris: ['http://localhost:8080/'],
      corsOrigins: ['http://localhost:8080'],
      accessTokenLifetime: 3600,
      requireConsent: false,
    });
    await tx.users.upsert({
      id: userId,
      source: 'local',
      subject: userId,
      username: demo.username,
      passwordHash,
      givenName: 'Demo',
      familyName: 'User',
      name: 'Demo User',
      email: 'demo@example.com',
      emailVerified: true,
      phoneNumber: null,
      phoneNumberVerified: false,
      // The first administrator: the console (/admin) asks them to set up a second factor first.
      roles: ['user', 'idp-admin'],
      locked: false,
      mustChangePassword: false,
      mustEnrolMfa: false,
    });
  });
  return demo;
}

export function formatDemoBanner(demo: DemoCredentials, config: Config): string {
  return [
    '',
    'Demo data created on the empty embedded database. These credentials are shown only once:',
    `  client:   ${demo.clientId} / ${demo.clientSecret}`,
    `            redirect URI ${demo.redirectUri}`,
    `  user:     ${demo.username} / ${demo.password}`,
    '',
    'Try the client credentials grant:',
    `  curl -s -u '${demo.clientId}:${demo.clientSecret}' -d grant_type=client_credentials -d scope=${DEMO_API_SCOPE} ${config.baseUrl}/connect/token`,
    '',
    `Discovery: ${config.baseUrl}/.well-known/openid-configuration`,
    ...(config.adminConsole && config.adminApi === 'public'
      ? ['', `Administration console: ${config.baseUrl}/admin (sign in as ${demo.username}; it asks you to set up a second factor first)`]
      : []),
    '',
  ].join('\n');
}
