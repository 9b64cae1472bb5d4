/**
 * Issuing and verifying the service's own JWTs (RS256, `kid` in the header). Access tokens are
 * typed `at+jwt` (RFC 9068 §2.1) so that an ID token can never pass for an access token.
 *
 * The RSA operations go straight to node:crypto rather than through jose, which in Node.js
 * goes through WebCrypto: both still run on libuv's thread pool (the main thread stays free),
 * signing at about 12% less CPU per signature and verifying at less than half. Verifying in
 * place would cost less still, but made the main thread the bottleneck of one instance (a
 * quarter of its time under userinfo load, with the other core idle). Only tokens of this
 * service are verified here, so the rules are few and fixed: the compact form, RS256, the
 * expected `typ`, a published `kid`, the signature, `iss` and `exp`.
 */
import { sign as rsaSign, verify as rsaVerify } from 'node:crypto';
import type { KeyManager } from './keys.ts';

export type TokenKind = 'access' | 'id';

/** The claims of a verified token. */
export interface TokenClaims {
  [claim: string]: unknown;
  iss?: string;
  sub?: string;
  aud?: string | string[];
  jti?: string;
  iat?: number;
  exp?: number;
}

const TYP: Record<TokenKind, string> = { access: 'at+jwt', id: 'JWT' };
const COMPACT_JWS = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;

const encodeSegment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The encoded header of each key and kind, made once: only the claims change per token. */
const headers = new Map<string, string>();

function headerSegment(kid: string, kind: TokenKind): string {
  const id = `${kind} ${kid}`;
  let segment = headers.get(id);
  if (segment === undefined) {
    // Keys rotate rarely; a bound keeps a long-running process from holding every kid it saw.
    if (headers.size >= 64) headers.clear();
    segment = encodeSegment({ alg: 'RS256', kid, typ: TYP[kind] });
    headers.set(id, segment);
  }
  return segment;
}

/** A header or payload segment as a JSON object, or undefined. */
function decodeSegment(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A node:crypto operation given a callback, which is what puts it on libuv's thread pool. */
function onThreadPool<T>(start: (done: (error: Error | null, result: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => start((error, result) => (error ? reject(error) : resolve(result))));
}

/** Signs claims (which already carry iss, iat and exp) with the current key. */
export async function signJwt(keys: KeyManager, kind: TokenKind, claims: TokenClaims): Promise<string> {
  const signer = await keys.signer();
  const input = `${headerSegment(signer.kid, kind)}.${encodeSegment(claims)}`;
  const signature = await onThreadPool<Buffer>((done) => rsaSign('sha256', Buffer.from(input), signer.key, done));
  return `${input}.${signature.toString('base64url')}`;
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
export async function verifyJwt(keys: KeyManager, kind: TokenKind, token: string, options: VerifyOptions): Promise<TokenClaims | undefined> {
  const parts = COMPACT_JWS.exec(token);
  if (!parts) return undefined;
  const [, headerSegment = '', payloadSegment = '', signatureSegment = ''] = parts;
  const header = decodeSegment(headerSegment);
  // RFC 7515 §4.1.11: no extension this service would have to understand.
  if (!header || header.alg !== 'RS256' || header.typ !== TYP[kind] || typeof header.kid !== 'string' || 'crit' in header) return undefined;
  const key = await keys.verificationKey(header.kid);
  if (!key) return undefined;
  const signed = Buffer.from(`${headerSegment}.${payloadSegment}`);
  const valid = await onThreadPool<boolean>((done) => rsaVerify('sha256', signed, key, Buffer.from(signatureSegment, 'base64url'), done));
  if (!valid) return undefined;
  const payload = decodeSegment(payloadSegment);
  if (!payload || payload.iss !== options.issuer || typeof payload.exp !== 'number') return undefined;
  if (!options.allowExpired && payload.exp <= options.now) return undefined;
  if (payload.nbf !== undefined && (typeof payload.nbf !== 'number' || payload.nbf > options.now)) return undefined;
  return payload as TokenClaims;
}
