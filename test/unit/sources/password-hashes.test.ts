/**
 * Imported password hashes, each made here by the library or node:crypto call its provider
 * uses: the right password matches, a wrong one does not, and a hash out of bounds or of an
 * unknown form is refused with a reason (and never verified).
 */
import { pbkdf2Sync, randomBytes, scryptSync } from 'node:crypto';
import { hash as argon2 } from '@node-rs/argon2';
import { hash as bcrypt } from '@node-rs/bcrypt';
import { describe, expect, it } from 'vitest';
import { passwordHashProblem, verifyHash } from '../../../src/sources/password-hashes.ts';
import { verifyPassword } from '../../../src/sources/passwords.ts';

const PASSWORD = 'correct horse battery staple';
const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');
const ab64 = (bytes: Buffer) => b64(bytes).replaceAll('+', '.');

function pbkdf2Hash(digest: 'sha256' | 'sha512', iterations: number, form: 'phc' | 'passlib'): string {
  const salt = randomBytes(16);
  const key = pbkdf2Sync(PASSWORD, salt, iterations, digest === 'sha256' ? 32 : 64, digest);
  return form === 'phc' ? `$pbkdf2-${digest}$i=${iterations}$${b64(salt)}$${b64(key)}` : `$pbkdf2-${digest}$${iterations}$${ab64(salt)}$${ab64(key)}`;
}

function scryptHash(ln: number, r = 8): string {
  const salt = randomBytes(16);
  const key = scryptSync(PASSWORD, salt, 32, { N: 2 ** ln, r, p: 1, maxmem: 256 * 1024 * 1024 });
  return `$scrypt$ln=${ln},r=${r},p=1$${b64(salt)}$${b64(key)}`;
}

describe('imported password hashes', () => {
  const kinds: Array<[string, () => Promise<string> | string]> = [
    ['bcrypt $2b$', () => bcrypt(PASSWORD, 4)],
    ['bcrypt $2a$', async () => (await bcrypt(PASSWORD, 4)).replace('$2b$', '$2a$')],
    ['bcrypt $2y$', async () => (await bcrypt(PASSWORD, 4)).replace('$2b$', '$2y$')],
    ['argon2id', () => argon2(PASSWORD, { algorithm: 2, memoryCost: 8192, timeCost: 1 })],
    ['argon2i', () => argon2(PASSWORD, { algorithm: 1, memoryCost: 8192, timeCost: 1 })],
    ['pbkdf2-sha256 (PHC)', () => pbkdf2Hash('sha256', 1000, 'phc')],
    ['pbkdf2-sha512 (PHC)', () => pbkdf2Hash('sha512', 1000, 'phc')],
    ['pbkdf2-sha256 (passlib)', () => pbkdf2Hash('sha256', 1000, 'passlib')],
    ['scrypt', () => scryptHash(10)],
  ];
  for (const [kind, make] of kinds) {
    it(`verifies ${kind}: the right password and nothing else`, async () => {
      const stored = await make();
      expect(passwordHashProblem(stored)).toBeUndefined();
      expect(await verifyHash(stored, PASSWORD)).toBe(true);
      expect(await verifyHash(stored, `${PASSWORD}!`)).toBe(false);
      expect(await verifyPassword(stored, PASSWORD)).toBe(true);
    });
  }

  it('refuses parameters beyond bounds, naming them', async () => {
    const bcrypt16 = (await bcrypt(PASSWORD, 4)).replace('$2b$04$', '$2b$16$');
    expect(passwordHashProblem(bcrypt16)).toMatch(/bcrypt cost of 16/);
    expect(passwordHashProblem(pbkdf2Hash('sha256', 1000, 'phc').replace('i=1000', 'i=10000001'))).toMatch(/10000001 PBKDF2 iterations/);
    expect(passwordHashProblem('$argon2id$v=19$m=262145,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaA')).toMatch(/MiB of memory/);
    expect(passwordHashProblem(scryptHash(10).replace('ln=10,r=8', 'ln=20,r=16'))).toMatch(/256 MiB/);
    expect(await verifyHash(bcrypt16, PASSWORD)).toBe(false);
  });

  it('refuses a malformed or unknown hash', () => {
    expect(passwordHashProblem('$2b$10$tooshort')).toBe('is malformed');
    expect(passwordHashProblem('$md5$abc')).toMatch(/not a known hash/);
    expect(passwordHashProblem('plain text password')).toMatch(/not a known hash/);
    expect(passwordHashProblem('$pbkdf2-sha256$i=1000$c2FsdA$c2hvcnQ')).toMatch(/shorter than 16 bytes/);
  });
});
