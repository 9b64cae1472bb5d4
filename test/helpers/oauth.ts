/**
 * What an OAuth client computes for itself (a PKCE pair, the Basic header of its credentials)
 * and how it reads an answer's body.
 */
import { createHash, randomBytes } from 'node:crypto';

export interface Pkce {
  verifier: string;
  challenge: string;
}

/** RFC 7636: a 256-bit verifier and its S256 challenge. */
export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** RFC 6749 §2.3.1: form-urlencode the id and the secret, then Basic-encode them. */
export function basic(clientId: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

/** A response body parsed as JSON, or `{ unparsed: text }` when it is not JSON. */
export function jsonBody(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { unparsed: text };
  }
}
