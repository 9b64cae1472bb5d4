import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isValidSessionCsrfToken, sessionCsrfToken } from '../../../src/sessions/csrf.ts';
import { hashClientSecret, hashToken, randomToken, verifyClientSecret } from '../../../src/tokens/opaque.ts';
import { createRefreshTokenCodec } from '../../../src/tokens/refresh-tokens.ts';
import { deriveKey, deriveKeyring, open, openWithKeyring, seal } from '../../../src/tokens/secret-box.ts';

describe('client secret hashes', () => {
  it('verify the secret they were made from, and nothing else', () => {
    const secret = randomToken();
    const stored = hashClientSecret(secret);
    expect(stored).toMatch(/^sha256\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(verifyClientSecret(secret, stored)).toBe(true);
    expect(verifyClientSecret(`${secret}x`, stored)).toBe(false);
    expect(verifyClientSecret(secret, stored.replace('sha256', 'md5'))).toBe(false);
    expect(verifyClientSecret(secret, 'garbage')).toBe(false);
  });

  it('are salted: one secret hashes differently twice', () => {
    expect(hashClientSecret('same-secret-0123456789abcdefghijkl')).not.toBe(hashClientSecret('same-secret-0123456789abcdefghijkl'));
  });

  it('random tokens carry 256 bits and hash to SHA-256', () => {
    expect(Buffer.from(randomToken(), 'base64url')).toHaveLength(32);
    expect(hashToken('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  });
});

describe('sealing', () => {
  const master = Buffer.alloc(32, 9);

  it('opens what it sealed, with the same key and context only', () => {
    const key = deriveKey(master, 'signing-keys');
    const sealed = seal(key, '{"d":"private"}', 'signing-key:k1');
    expect(sealed).not.toContain('private');
    expect(open(key, sealed, 'signing-key:k1')).toBe('{"d":"private"}');
    expect(() => open(key, sealed, 'signing-key:k2')).toThrow();
    expect(() => open(deriveKey(master, 'totp-secrets'), sealed, 'signing-key:k1')).toThrow();
    expect(() => open(deriveKey(Buffer.alloc(32, 8), 'signing-keys'), sealed, 'signing-key:k1')).toThrow();
  });

  it('refuses a tag cut short, even to a prefix of the right one (full 16-byte GCM tag only)', () => {
    const key = deriveKey(master, 'totp-secrets');
    const [version, iv, body, tag] = seal(key, 'JBSWY3DPEHPK3PXP', 'totp:u1').split('.');
    const full = Buffer.from(tag ?? '', 'base64url');
    expect(full).toHaveLength(16);
    for (const length of [4, 8, 12, 15]) {
      const cut = [version, iv, body, full.subarray(0, length).toString('base64url')].join('.');
      expect(() => open(key, cut, 'totp:u1'), `a ${length}-byte tag`).toThrow();
    }
  });

  it('derives a different key per purpose', () => {
    expect(deriveKey(master, 'cookies').equals(deriveKey(master, 'totp-secrets'))).toBe(false);
  });
});

describe('a change of master secret (IDP_SECRET_PREVIOUS)', () => {
  const older = Buffer.alloc(32, 1);
  const newer = Buffer.alloc(32, 2);
  const rotating = { current: newer, previous: [older] };

  it('opens what either secret sealed, telling which, and seals under the current one only', () => {
    const underOld = seal(deriveKey(older, 'totp-secrets'), 'JBSWY3DPEHPK3PXP', 'totp:u1');
    const ring = deriveKeyring(rotating, 'totp-secrets');
    expect(openWithKeyring(ring, underOld, 'totp:u1')).toStrictEqual({ text: 'JBSWY3DPEHPK3PXP', current: false });
    const underNew = seal(ring.current, 'JBSWY3DPEHPK3PXP', 'totp:u1');
    expect(openWithKeyring(ring, underNew, 'totp:u1')).toStrictEqual({ text: 'JBSWY3DPEHPK3PXP', current: true });
    expect(() => open(deriveKey(older, 'totp-secrets'), underNew, 'totp:u1')).toThrow();
    // Neither secret, or another context: refused.
    expect(() => openWithKeyring(deriveKeyring({ current: Buffer.alloc(32, 3), previous: [] }, 'totp-secrets'), underOld, 'totp:u1')).toThrow();
    expect(() => openWithKeyring(ring, underOld, 'totp:u2')).toThrow();
  });

  it('keeps refresh tokens and CSRF tokens made under the older secret genuine, and makes new ones under the current', () => {
    const salt = randomBytes(32);
    const family = randomUUID();
    const before = createRefreshTokenCodec(deriveKey(older, 'refresh-tokens'));
    const during = createRefreshTokenCodec(deriveKeyring(rotating, 'refresh-tokens'));
    const after = createRefreshTokenCodec(deriveKey(newer, 'refresh-tokens'));
    const old = before.read(before.issue(family, 2, salt))!;
    expect(during.isGenuine(old, salt)).toBe(true);
    expect(after.isGenuine(old, salt)).toBe(false);
    const fresh = during.read(during.issue(family, 3, salt))!;
    expect(after.isGenuine(fresh, salt)).toBe(true);
    expect(before.isGenuine(fresh, salt)).toBe(false);

    const csrf = sessionCsrfToken(deriveKey(older, 'cookies'), 'session-key', 'logout');
    expect(isValidSessionCsrfToken(deriveKeyring(rotating, 'cookies'), 'session-key', 'logout', csrf)).toBe(true);
    expect(isValidSessionCsrfToken(deriveKey(newer, 'cookies'), 'session-key', 'logout', csrf)).toBe(false);
    expect(isValidSessionCsrfToken(deriveKeyring(rotating, 'cookies'), 'other-session', 'logout', csrf)).toBe(false);
    expect(sessionCsrfToken(deriveKeyring(rotating, 'cookies'), 'session-key', 'logout')).toBe(sessionCsrfToken(deriveKey(newer, 'cookies'), 'session-key', 'logout'));
  });
});
