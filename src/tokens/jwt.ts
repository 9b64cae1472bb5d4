/**
 * Issuing and verifying the service's own JWTs (RS256, `kid` in the header). Access tokens are
 * typed `at+jwt` (RFC 9068 §2.1) so that an ID token can never pass for an access token.
 */
import { errors, jwtVerify, SignJWT, decodeProtectedHeader, type JWTPayload } from 'jose';
import type { KeyManager } from './keys.ts';

export type TokenKind = 'access' | 'id';

/** The claims of a verified token (jose's payload type, so that only tokens/ imports jose). */
export type TokenClaims = JWTPayload;

const TYP: Record<TokenKind, string> = { access: 'at+jwt', id: 'JWT' };

/** Signs claims (which already carry iss, iat and exp) with the current key. */
export async function signJwt(keys: KeyManager, kind: TokenKind, claims: JWTPayload): Promise<string> {
  const signer = await keys.signer();
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: signer.kid, typ: TYP[kind] }).sign(signer.key);
}

export interface VerifyOptions {
  issuer: string;
  /** Seconds since the epoch, from the injected clock. */
  now: number;
  /** Accept an expired token (end session accepts expired ID token hints). */
  allowExpired?: boolean;
}

/**
 * Verifies a JWT this service issued: signature by a published key, issuer, type and (unless
 * allowed) expiry. Returns undefined for anything that does not verify.
 */
export async function verifyJwt(keys: KeyManager, kind: TokenKind, token: string, options: VerifyOptions): Promise<JWTPayload | undefined> {
  let kid: string | undefined;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== 'RS256' || header.typ !== TYP[kind]) return undefined;
    kid = header.kid;
  } catch {
    return undefined;
  }
  const key = kid ? await keys.verificationKey(kid) : undefined;
  if (!key) return undefined;
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['RS256'],
      issuer: options.issuer,
      typ: TYP[kind],
      currentDate: new Date(options.now * 1000),
      // An expired hint is still a proof of who it was issued to; checked again below otherwise.
      ...(options.allowExpired ? { clockTolerance: Number.MAX_SAFE_INTEGER } : {}),
    });
    return payload;
  } catch (error) {
    if (error instanceof errors.JOSEError) return undefined;
    throw error;
  }
}
