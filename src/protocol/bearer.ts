/** RFC 6750 §2.1: the access token of a request, from the Authorization header only. */
import { OAuthError } from '../errors.ts';

/** Every refusal of a token says the same to the caller; `detail` (logged) says which it was. */
export const invalidToken = (detail: string) => new OAuthError('invalid_token', 'The access token is missing, invalid, expired or revoked.', { detail });

export function bearerToken(authorization: string | undefined): string {
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/i.exec(authorization ?? '');
  if (!match?.[1]) throw invalidToken('no Bearer token in the Authorization header');
  return match[1];
}
