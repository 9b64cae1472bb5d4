/**
 * Who may call the administration API: a bearer of an access token this service issued through
 * the client credentials grant, accepted at every call by the one access-token verifier
 * (protocol/access-token.ts: signature, expiry, revocation, client enabled), whose client still lists, in its `scopes` column, the administration
 * scope the call needs. The client is read through the clients cache, which an SQL edit
 * invalidates on every instance within a second: a client disabled or stripped of the scope
 * loses access that fast, whatever its tokens say.
 */
import { OAuthError } from '../errors.ts';
import { acceptBearerToken, type AccessTokenDeps } from '../protocol/access-token.ts';
import { invalidToken } from '../protocol/bearer.ts';

export const ADMIN_API = 'admin_api';
export const ADMIN_API_READONLY = 'admin_api_readonly';
export const ADMIN_CONSOLE_WEBHOOKS = 'admin_console_webhooks';

/** The API's resources as its scopes see them: the webhook resources have a scope of their own. */
export type AdminArea = 'admin' | 'webhooks';

/**
 * The scope a call needs, first the narrowest, then the others that also allow it: `admin_api`
 * allows everything, `admin_api_readonly` reading (GET, HEAD), `admin_console_webhooks` the
 * webhook resources.
 */
export function scopesAllowing(method: string, area: AdminArea): string[] {
  const reading = method === 'GET' || method === 'HEAD';
  if (area === 'webhooks') return [ADMIN_CONSOLE_WEBHOOKS, ADMIN_API, ...(reading ? [ADMIN_API_READONLY] : [])];
  return reading ? [ADMIN_API_READONLY, ADMIN_API] : [ADMIN_API];
}

export interface AdminCaller {
  clientId: string;
  /** The token's scopes that its client still lists. */
  scopes: string[];
}

export type AdminAccessDeps = AccessTokenDeps;

/**
 * The caller of a call that needs one of `allowing` (scopesAllowing): 401 `invalid_token` for a
 * token that is not one of ours, expired or revoked, a user's token, or one whose client is gone,
 * disabled or no longer lists the scope; 403 `insufficient_scope` for a token never granted it.
 */
export async function authorizeAdminCall(authorization: string | undefined, allowing: readonly string[], deps: AdminAccessDeps): Promise<AdminCaller> {
  // Administration scopes come from the client credentials grant only: a token naming a user is not one.
  const { client, scopes: granted } = await acceptBearerToken(authorization, deps, { kind: 'client' });
  const needed = granted.filter((scope) => allowing.includes(scope));
  if (needed.length === 0) {
    throw new OAuthError('insufficient_scope', `The access token was not granted the ${allowing[0]} scope.`, { scope: allowing[0], detail: `needs one of ${allowing.join(', ')}` });
  }
  if (!needed.some((scope) => client.scopes.includes(scope))) throw invalidToken(`client ${client.clientId} no longer lists ${needed.join(', ')}`);
  return { clientId: client.clientId, scopes: granted.filter((scope) => client.scopes.includes(scope)) };
}
