/**
 * How a client is shown: wire names for JSON, fields and table rows for text. The secret hash is
 * never shown, only whether a secret is set and when it expires (and until when the previous
 * secret of a rotation is still accepted).
 */
import { clientType } from '../admin/clients.ts';
export { clientDocument } from '../admin/documents.ts';
import type { ClientRecord } from '../store/records.ts';
import { formatFields, listText, timeText, yesNo } from './output.ts';

export function clientFieldLines(client: ClientRecord): string[] {
  const secret = client.secretHash === null ? 'none (public client)' : `set, expires ${client.secretExpiresAt?.toISOString() ?? 'never'}`;
  return formatFields([
    ['client_id', client.clientId],
    ['display_name', client.displayName || '-'],
    ['enabled', yesNo(client.enabled)],
    ['client_type', clientType(client)],
    ['secret', secret],
    ...(client.previousSecret ? [['previous_secret', `also accepted until ${client.previousSecret.expiresAt.toISOString()}`] as [string, string]] : []),
    ['grant_types', listText(client.grantTypes)],
    ['scopes', listText(client.scopes)],
    ['redirect_uris', listText(client.redirectUris)],
    ['post_logout_redirect_uris', listText(client.postLogoutRedirectUris)],
    ['cors_origins', listText(client.corsOrigins)],
    ['access_token_lifetime', `${client.accessTokenLifetime} s`],
    ['require_consent', yesNo(client.requireConsent)],
  ]);
}

export const CLIENT_TABLE_HEADERS = ['CLIENT ID', 'NAME', 'ENABLED', 'TYPE', 'GRANTS', 'SECRET EXPIRES'];

export function clientRow(client: ClientRecord): string[] {
  return [
    client.clientId,
    client.displayName || '-',
    yesNo(client.enabled),
    clientType(client),
    listText(client.grantTypes),
    client.secretHash === null ? '-' : timeText(client.secretExpiresAt),
  ];
}
