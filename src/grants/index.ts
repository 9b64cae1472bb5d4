/** grant_type -> grant. A grant not listed here is `unsupported_grant_type`. */
import { authorizationCodeGrant } from './authorization-code.ts';
import { clientCredentialsGrant } from './client-credentials.ts';
import { refreshTokenGrant } from './refresh-token.ts';
import type { Grant } from './common.ts';

export const grants: ReadonlyMap<string, Grant<unknown>> = new Map<string, Grant<unknown>>([
  [authorizationCodeGrant.grantType, authorizationCodeGrant as Grant<unknown>],
  [clientCredentialsGrant.grantType, clientCredentialsGrant as Grant<unknown>],
  [refreshTokenGrant.grantType, refreshTokenGrant as Grant<unknown>],
]);
