/**
 * CSRF tokens for forms outside an interaction (the sign-out confirmation): an HMAC of the
 * browser session's key under a key derived from IDP_SECRET, so a token is good for one
 * session and one purpose only.
 */
import { createHmac } from 'node:crypto';
import { sameBytes } from '../tokens/constant-time.ts';
import { asKeyring, keysOf, type Keyring } from '../tokens/secret-box.ts';

function mac(key: Buffer, sessionKey: string, purpose: string): string {
  return createHmac('sha256', key).update(`${purpose}\n${sessionKey}`).digest('base64url');
}

/** Made under the current key. */
export function sessionCsrfToken(key: Buffer | Keyring, sessionKey: string, purpose: string): string {
  return mac(asKeyring(key).current, sessionKey, purpose);
}

/** Good under any key of the ring: a form shown before a change of IDP_SECRET still posts. */
export function isValidSessionCsrfToken(key: Buffer | Keyring, sessionKey: string, purpose: string, token: string | undefined): boolean {
  if (!token) return false;
  return keysOf(asKeyring(key)).some((k) => sameBytes(mac(k, sessionKey, purpose), token));
}
