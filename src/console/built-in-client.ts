/**
 * The console as an application of this service: a built-in first-party client, never a row of
 * `clients` (its id is reserved by a constraint), so it cannot be edited, listed by the API or
 * shown as an application. It is public (PKCE S256, no secret), may receive only a code at
 * `/admin/callback` of where the console is served (the base URL, or the management origin with
 * IDP_ADMIN_API=management), needs no consent, and its sign-ins need a second factor.
 */
import type { ClientsCache } from '../store/clients-cache.ts';
import { CONSOLE_CLIENT_ID, type ClientRecord } from '../store/records.ts';

export { CONSOLE_CLIENT_ID };

/** What the console asks for: who the administrator is and their roles. */
export const CONSOLE_SCOPES = ['openid', 'profile', 'roles'];

export const consoleCallbackUrl = (consoleUrl: string) => `${consoleUrl}/admin/callback`;

export function consoleClient(consoleUrl: string): ClientRecord {
  return {
    clientId: CONSOLE_CLIENT_ID,
    displayName: 'Administration console',
    enabled: true,
    secretHash: null,
    secretExpiresAt: null,
    grantTypes: ['authorization_code'],
    scopes: CONSOLE_SCOPES,
    redirectUris: [consoleCallbackUrl(consoleUrl)],
    postLogoutRedirectUris: [],
    corsOrigins: [],
    // The console never uses the access token: its own session is what it keeps.
    accessTokenLifetime: 60,
    requireConsent: false,
  };
}

/** The clients cache with the console's client beside the table's rows (which can never hold its id). */
export function withConsoleClient(cache: ClientsCache, consoleUrl: string): ClientsCache {
  const builtIn = consoleClient(consoleUrl);
  return {
    get: (clientId) => (clientId === CONSOLE_CLIENT_ID ? Promise.resolve(builtIn) : cache.get(clientId)),
    allowedOrigins: () => cache.allowedOrigins(),
    close: () => cache.close(),
  };
}
