/**
 * The refresh token format: a token names its family and generation, and only the holder of
 * both the key (from IDP_SECRET) and the family's salt (in the database) can make one.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRefreshTokenCodec } from '../../../src/tokens/refresh-tokens.ts';

const codec = createRefreshTokenCodec(Buffer.alloc(32, 7));
const familyId = randomUUID();
const salt = randomBytes(32);

/** The token with one character changed at `index`. */
function changedAt(token: string, index: number): string {
  const replacement = token[index] === 'A' ? 'B' : 'A';
  return token.slice(0, index) + replacement + token.slice(index + 1);
}

describe('refresh token format', () => {
  it('names the family and generation, and is the same value every time it is issued', () => {
    const token = codec.issue(familyId, 41, salt);
    expect(token).toMatch(/^[A-Za-z0-9_-]{71}$/);
    expect(codec.issue(familyId, 41, salt)).toBe(token);
    const read = codec.read(token);
    expect(read).toMatchObject({ familyId, generation: 41 });
    expect(codec.isGenuine(read!, salt)).toBe(true);
  });

  it('makes a different token for every generation, family and salt', () => {
    const tokens = new Set([
      codec.issue(familyId, 0, salt),
      codec.issue(familyId, 1, salt),
      codec.issue(randomUUID(), 0, salt),
      codec.issue(familyId, 0, randomBytes(32)),
      createRefreshTokenCodec(Buffer.alloc(32, 8)).issue(familyId, 0, salt),
    ]);
    expect(tokens.size).toBe(5);
  });

  it('refuses a token under another salt or another key', () => {
    const read = codec.read(codec.issue(familyId, 3, salt))!;
    expect(codec.isGenuine(read, randomBytes(32))).toBe(false);
    expect(createRefreshTokenCodec(Buffer.alloc(32, 8)).isGenuine(read, salt)).toBe(false);
  });

  it('refuses a token with any one character changed: family, generation or MAC', () => {
    const token = codec.issue(familyId, 3, salt);
    for (const index of [2, 10, 23, 27, 40, 70]) {
      const read = codec.read(changedAt(token, index));
      expect(read === undefined || !codec.isGenuine(read, salt)).toBe(true);
    }
  });

  it('does not read what is not of its format', () => {
    const token = codec.issue(familyId, 3, salt);
    for (const other of ['', token.slice(1), `${token}A`, `${token.slice(0, 70)}=`, 'z'.repeat(43), `${token.slice(0, 35)}.${token.slice(36)}`]) {
      expect(codec.read(other)).toBeUndefined();
    }
    // Another version byte.
    const bytes = Buffer.from(token, 'base64url');
    bytes[0] = 2;
    expect(codec.read(bytes.toString('base64url'))).toBeUndefined();
  });

  it('derives one access token id per family and generation', () => {
    expect(codec.accessJti(familyId, 5)).toBe(codec.accessJti(familyId, 5));
    expect(new Set([codec.accessJti(familyId, 5), codec.accessJti(familyId, 6), codec.accessJti(randomUUID(), 5)]).size).toBe(3);
  });

  it('refuses to issue a token for a family id that is not a UUID', () => {
    expect(() => codec.issue('not-a-uuid', 0, salt)).toThrow(/UUID/);
  });
});
