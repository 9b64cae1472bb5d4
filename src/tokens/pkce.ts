/** RFC 7636: Proof Key for Code Exchange, S256 only. */
import { createHash } from 'node:crypto';
import { sameBytes } from './constant-time.ts';

/** §4.1: code_verifier = 43*128 unreserved characters. */
export const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** §4.2: an S256 challenge is the base64url SHA-256 of the verifier: 43 characters. */
export const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** §4.6: whether the verifier hashes to the challenge (compared in constant time). */
export function verifyPkce(verifier: string, challenge: string): boolean {
  if (!CODE_VERIFIER.test(verifier)) return false;
  return sameBytes(challenge, s256Challenge(verifier));
}
