/**
 * The refresh token's own format: which family, which generation, and a MAC over both and the
 * family's random salt under a key derived from IDP_SECRET. The database keeps no bearer value
 * (the salt alone makes no token, nor does the key alone), a rotation changes one row in place,
 * and every earlier generation of a family is still recognised, so the reuse of any rotated-out
 * token is detected without keeping a row per token.
 *
 * Layout (71 characters of base64url): version (1 byte), family id (a UUID, 16 bytes),
 * generation (uint32, big-endian), HMAC-SHA-256 (32 bytes).
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { sameBytes } from './constant-time.ts';
import { asKeyring, type Keyring } from './secret-box.ts';

const VERSION = 1;
const LENGTH = 1 + 16 + 4 + 32;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface PresentedRefreshToken {
  familyId: string;
  generation: number;
  mac: Buffer;
}

export interface RefreshTokenCodec {
  /** The token of one generation of a family: the same value every time it is asked for. */
  issue(familyId: string, generation: number, salt: Buffer): string;
  /** What a token says it is, before anything is checked; undefined when it is not of this format. */
  read(token: string): PresentedRefreshToken | undefined;
  /** Whether the service made this token, given its family's salt (constant time). */
  isGenuine(token: PresentedRefreshToken, salt: Buffer): boolean;
  /**
   * The `jti` of the access token issued with a generation: derived, not random, so that a
   * retried refresh signs exactly the same claims again.
   */
  accessJti(familyId: string, generation: number): string;
}

const uuidBytes = (id: string) => Buffer.from(id.replaceAll('-', ''), 'hex');

function uuidText(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function generationBytes(generation: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(generation);
  return bytes;
}

/**
 * Tokens are made under the current key of the ring; a token made under a previous one
 * (IDP_SECRET_PREVIOUS) is still genuine, checked only when the current key fails.
 */
export function createRefreshTokenCodec(secret: Buffer | Keyring): RefreshTokenCodec {
  // Key objects, made once: createHmac with raw bytes makes one on every call (5x the cost).
  const ring = asKeyring(secret);
  const key = createSecretKey(ring.current);
  const previous = ring.previous.map((k) => createSecretKey(k));
  const macUnder = (k: KeyObject, head: Buffer, salt: Buffer) => createHmac('sha256', k).update('refresh token\n').update(head).update(salt).digest();
  const mac = (head: Buffer, salt: Buffer) => macUnder(key, head, salt);
  const head = (familyId: string, generation: number) => Buffer.concat([Buffer.of(VERSION), uuidBytes(familyId), generationBytes(generation)]);
  return {
    issue(familyId, generation, salt) {
      if (!UUID.test(familyId)) throw new Error('a refresh token family id is a UUID');
      const start = head(familyId, generation);
      return Buffer.concat([start, mac(start, salt)]).toString('base64url');
    },
    read(token) {
      if (token.length !== Math.ceil((LENGTH * 4) / 3) || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
      const bytes = Buffer.from(token, 'base64url');
      // Canonical only: one token, one spelling (the last character has bits a decoder ignores).
      if (bytes.length !== LENGTH || bytes[0] !== VERSION || bytes.toString('base64url') !== token) return undefined;
      return { familyId: uuidText(bytes.subarray(1, 17)), generation: bytes.readUInt32BE(17), mac: bytes.subarray(21) };
    },
    isGenuine(token, salt) {
      const start = head(token.familyId, token.generation);
      const matches = (k: KeyObject) => sameBytes(macUnder(k, start, salt), token.mac);
      return matches(key) || previous.some(matches);
    },
    accessJti(familyId, generation) {
      return createHmac('sha256', key).update('access token id\n').update(head(familyId, generation)).digest().subarray(0, 16).toString('base64url');
    },
  };
}
