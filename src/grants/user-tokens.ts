/**
 * Tokens for a signed-in user: the access token (with the claims of its scopes), the ID token
 * when `openid` was granted, and a refresh token when the client has the refresh grant and
 * `offline_access` was granted. Shared by the code exchange and the refresh grant, so both
 * answer in the same shape.
 */
import { randomUUID } from 'node:crypto';
import { epochSeconds } from '../clock.ts';
import { OAuthError } from '../errors.ts';
import { hasSecondFactor, type ClientRecord, type UserRecord } from '../store/records.ts';
import { acrFor, permittedClaims, userClaims, type ClaimsRequest } from '../tokens/claims.ts';
import { signJwt } from '../tokens/jwt.ts';
import type { SigningDeps, TokenResponse } from './common.ts';

/** What an authorization granted; kept with the code, and with the refresh token family. */
export interface Authorization {
  userId: string;
  scopes: string[];
  /** Seconds since the epoch. */
  authTime: number;
  amr: string[];
  nonce?: string | undefined;
  claims?: ClaimsRequest | undefined;
  /** Scopes the user consented to (or the client may use without consent): bounds the claims parameter. */
  allowedScopes: string[];
}

/** How this issue is tied to a refresh token family, when it is. */
export interface FamilyIssue {
  familyId: string;
  refreshToken: string;
  /** The access token's id; derived from the family and generation (tokens/refresh-tokens.ts). */
  jti: string;
  /** Seconds since the epoch: the generation's issue time, so that a retry signs the same claims. */
  iat?: number;
}

export interface IssuedTokens {
  response: TokenResponse;
  jti: string;
  /** Expiry of the access token, seconds since the epoch. */
  accessExpiresAt: number;
}

/**
 * RFC 6749 §5.2: a grant whose user was removed, locked, or must change password or enrol in MFA
 * is no longer valid (invalid_grant; README, Endpoints).
 */
export function assertUserMayReceiveTokens(user: UserRecord | undefined): asserts user is UserRecord {
  if (!user) throw new OAuthError('invalid_grant', 'The user no longer exists.');
  if (user.locked) throw new OAuthError('invalid_grant', 'The user is locked.');
  if (user.mustChangePassword) throw new OAuthError('invalid_grant', 'The user must change their password.');
  // The flag asks for a second factor: a user who has one already (app or passkey) satisfies it.
  if (user.mustEnrolMfa && !hasSecondFactor(user)) throw new OAuthError('invalid_grant', 'The user must enrol a second factor.');
}

/**
 * Signs the access token and, with `openid`, the ID token (in parallel: signing runs off the
 * main thread). With a family, the tokens carry its refresh token, and the access token names
 * the family (`svc_fid`) so that revoking the family revokes it too.
 */
export async function mintUserTokens(
  user: UserRecord,
  client: ClientRecord,
  authorization: Authorization,
  deps: SigningDeps,
  family?: FamilyIssue,
): Promise<IssuedTokens> {
  const iat = family?.iat ?? epochSeconds(deps.clock);
  const exp = iat + client.accessTokenLifetime;
  const jti = family?.jti ?? randomUUID();
  const scope = authorization.scopes.join(' ');
  const scopeClaims = userClaims(user, { scopes: authorization.scopes, idp: user.source, roleShape: 'jwt' });
  const userinfoClaims = permittedClaims(authorization.claims?.userinfo, authorization.allowedScopes);
  const access = signJwt(deps.keys, 'access', {
    ...scopeClaims,
    iss: deps.issuer,
    sub: user.subject,
    iat,
    exp,
    jti,
    client_id: client.clientId,
    scope,
    // Private claims: whose token this is internally, its refresh token family, and what
    // userinfo was asked to add.
    svc_uid: user.id,
    ...(family ? { svc_fid: family.familyId } : {}),
    ...(userinfoClaims.length > 0 ? { svc_userinfo: userinfoClaims } : {}),
  });
  const id = authorization.scopes.includes('openid')
    ? signJwt(deps.keys, 'id', {
        ...userClaims(user, {
          scopes: authorization.scopes,
          extra: permittedClaims(authorization.claims?.id_token, authorization.allowedScopes),
          idp: user.source,
          roleShape: 'jwt',
        }),
        iss: deps.issuer,
        sub: user.subject,
        aud: client.clientId,
        iat,
        exp,
        auth_time: authorization.authTime,
        amr: authorization.amr,
        acr: acrFor(authorization.amr),
        ...(authorization.nonce !== undefined ? { nonce: authorization.nonce } : {}),
      })
    : undefined;
  const [accessToken, idToken] = await Promise.all([access, id]);
  return {
    response: {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: client.accessTokenLifetime,
      scope,
      ...(idToken !== undefined ? { id_token: idToken } : {}),
      ...(family ? { refresh_token: family.refreshToken } : {}),
    },
    jti,
    accessExpiresAt: exp,
  };
}
