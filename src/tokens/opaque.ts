/**
 * Random bearer values and their hashes. Codes, refresh tokens and session ids carry 256 bits
 * and are stored only as their SHA-256. Client secrets also carry 256 bits when we generate
 * them (and at least 32 characters when an administrator chooses one), so a salted SHA-256
 * is as strong as a slow hash here and keeps the token endpoint fast.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sameBytes } from './constant-time.ts';

/** A random value of `bytes` bytes (256 bits by default), base64url. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 of a bearer value, base64url: the only form in which such values are stored. */
export function hashToken(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** The shortest client secret an administrator may choose (a fast hash only protects a long secret). */
export const MIN_CLIENT_SECRET_LENGTH = 32;

/** Hashes a client secret as `sha256$<salt>$<digest>` (the format of the `clients.secret_hash` column). */
export function hashClientSecret(secret: string, salt: Buffer = randomBytes(16)): string {
  const digest = createHash('sha256').update(salt).update(secret, 'utf8').digest();
  return `sha256$${salt.toString('base64url')}$${digest.toString('base64url')}`;
}

/** Checks a client secret against its stored hash in constant time. */
export function verifyClientSecret(secret: string, stored: string): boolean {
  const [scheme, salt, digest] = stored.split('$');
  if (scheme !== 'sha256' || !salt || !digest) return false;
  const expected = Buffer.from(digest, 'base64url');
  const actual = createHash('sha256').update(Buffer.from(salt, 'base64url')).update(secret, 'utf8').digest();
  return sameBytes(expected, actual);
}
