/**
 * The grants of the token endpoint, by grant_type: a grant not listed here is
 * `unsupported_grant_type`. Each grant is made over the deps it declares; the registry is made
 * over all of them at once.
 */
import { OAuthError } from '../errors.ts';
import type { Audit } from '../events/record.ts';
import type { AuthenticatedClient } from '../protocol/client-auth.ts';
import type { Params } from '../protocol/params.ts';
import { createAuthorizationCodeGrant, type AuthorizationCodeDeps } from './authorization-code.ts';
import { createClientCredentialsGrant, type ClientCredentialsDeps } from './client-credentials.ts';
import type { Grant, TokenResponse } from './common.ts';
import { createRefreshTokenGrant, type RefreshTokenDeps } from './refresh-token.ts';

export type GrantsDeps = AuthorizationCodeDeps & RefreshTokenDeps & ClientCredentialsDeps;

export interface Grants {
  /**
   * The token request of an authenticated client (RFC 6749 §3.2): the grant its grant_type
   * names, if the client may use it, parses its own parameters and handles them.
   */
  issue(params: Params, client: AuthenticatedClient, audit: Audit): Promise<TokenResponse>;
}

export function createGrants(deps: GrantsDeps): Grants {
  const grants = new Map<string, Grant>(
    [createAuthorizationCodeGrant(deps), createClientCredentialsGrant(deps), createRefreshTokenGrant(deps)].map((grant) => [grant.grantType, grant]),
  );
  return {
    async issue(params, authenticated, audit) {
      if (params.grant_type === undefined) throw new OAuthError('invalid_request', 'The grant_type parameter is required.');
      const grant = grants.get(params.grant_type);
      if (!grant) throw new OAuthError('unsupported_grant_type', 'The grant type is not supported.');
      if (!authenticated.client.grantTypes.includes(grant.grantType)) {
        throw new OAuthError('unauthorized_client', 'The client may not use this grant type.');
      }
      return grant.handle(params, authenticated, audit);
    },
  };
}
