/**
 * CSRF tokens for forms outside an interaction (the sign-out confirmation): an HMAC of the
 * browser session's key under a key derived from IDP_SECRET, so a token is good for one
 * session and one purpose only.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function sessionCsrfToken(key: Buffer, sessionKey: string, purpose: string): string {
  return createHmac('sha256', key).update(`${purpose}\n${sessionKey}`).digest('base64url');
}

export function isValidSessionCsrfToken(key: Buffer, sessionKey: string, purpose: string, token: string | undefined): boolean {
  if (!token) return false;
  const expected = Buffer.from(sessionCsrfToken(key, sessionKey, purpose));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
