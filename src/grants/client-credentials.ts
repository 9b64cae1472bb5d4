/**
 * RFC 6749 §4.4: the client credentials grant. Confidential clients only, no user, no refresh
 * token, no ID token. `sub` is the client ID and `name` the client's display name.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { epochSeconds } from '../clock.ts';
import { OAuthError } from '../errors.ts';
import type { ClientRecord } from '../store/records.ts';
import { signJwt } from '../tokens/jwt.ts';
import { OIDC_SCOPES, SERVICE_SCOPES, parseScope } from '../scopes.ts';
import { defineGrant, type Grant, type SigningDeps } from './common.ts';

const paramsSchema = z.object({ scope: z.string().optional() });

/**
 * The scopes granted: each asked-for scope must be allowed to the client and be an API scope or
 * one of the service's administration scopes (which this grant alone gives). Without a scope
 * parameter, every API scope the client may use (RFC 6749 §3.3 default): an administration
 * scope is given only when asked for.
 */
function grantedScopes(client: ClientRecord, asked: string[]): string[] {
  const apiScopes = client.scopes.filter((s) => !OIDC_SCOPES.has(s) && !SERVICE_SCOPES.has(s));
  if (asked.length === 0) return apiScopes;
  const allowed = client.scopes.filter((s) => !OIDC_SCOPES.has(s));
  const refused = asked.filter((s) => !allowed.includes(s));
  if (refused.length > 0) {
    throw new OAuthError('invalid_scope', `The client may not use the scope ${refused[0]} with this grant.`);
  }
  return asked;
}

export type ClientCredentialsDeps = SigningDeps;

export function createClientCredentialsGrant(deps: ClientCredentialsDeps): Grant {
  return defineGrant('client_credentials', paramsSchema, async (params, { client, method }, audit) => {
    if (method === 'none') throw new OAuthError('unauthorized_client', 'Public clients may not use the client credentials grant.');
    const scopes = grantedScopes(client, parseScope(params.scope));
    const iat = epochSeconds(deps.clock);
    const scope = scopes.join(' ');
    const accessToken = await signJwt(deps.keys, 'access', {
      iss: deps.issuer,
      sub: client.clientId,
      iat,
      exp: iat + client.accessTokenLifetime,
      jti: randomUUID(),
      client_id: client.clientId,
      scope,
      name: client.displayName || client.clientId,
    });
    audit({ type: 'token_issued', grant: 'client_credentials', client_id: client.clientId });
    return { access_token: accessToken, token_type: 'Bearer', expires_in: client.accessTokenLifetime, scope };
  });
}
