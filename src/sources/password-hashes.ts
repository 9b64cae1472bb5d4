/**
 * Password hashes made elsewhere (another provider's, imported with their users): bcrypt,
 * argon2 (id and i), PBKDF2 and scrypt, as PHC or crypt strings. Each is checked once, at
 * import, for its form and for parameters within bounds, so a stored hash cannot make a
 * sign-in expensive; it is verified by a well-kept library (or node:crypto, compared in
 * constant time) until the first sign-in replaces it with the service's own argon2id.
 */
import { pbkdf2, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { verify as verifyArgon2 } from '@node-rs/argon2';
import { verify as verifyBcrypt } from '@node-rs/bcrypt';

/** The most work an imported hash may ask of a sign-in (beyond these, it is refused at import). */
export const HASH_BOUNDS = {
  bcryptCost: 15,
  pbkdf2Iterations: 10_000_000,
  /** Memory of one argon2 or scrypt computation, in bytes. */
  memoryBytes: 256 * 1024 * 1024,
  argon2Time: 10,
  parallelism: 16,
} as const;

type Digest = 'sha1' | 'sha256' | 'sha512';

/** A hash as read from its string: what verifying it takes. */
export type ParsedHash =
  | { kind: 'bcrypt'; cost: number }
  | { kind: 'argon2'; memoryKiB: number; time: number; parallelism: number }
  | { kind: 'pbkdf2'; digest: Digest; iterations: number; salt: Buffer; hash: Buffer }
  | { kind: 'scrypt'; cost: number; blockSize: number; parallelism: number; salt: Buffer; hash: Buffer };

const B64 = '[A-Za-z0-9+/.]+={0,2}';
const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const ARGON2 = /^\$argon2(?:id|i)\$(?:v=(?:16|19)\$)?m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;
// PHC (`i=27500`, with an optional `l=` key length) or passlib's crypt form (the bare count).
const PBKDF2 = new RegExp(`^\\$pbkdf2(?:-(sha1|sha256|sha512))?\\$(?:i=)?(\\d+)(?:,l=\\d+)?\\$(${B64})\\$(${B64})$`);
const SCRYPT = new RegExp(`^\\$scrypt\\$(ln|n)=(\\d+),r=(\\d+),p=(\\d+)\\$(${B64})\\$(${B64})$`);

/** Standard or passlib's adapted base64 (`.` for `+`), padded or not. */
const decodeBase64 = (text: string): Buffer => Buffer.from(text.replaceAll('.', '+'), 'base64');

/** The hash's kind and parameters, or what is wrong with it (malformed, unknown, beyond bounds). */
export function parseHash(stored: string): ParsedHash | string {
  const bcrypt = BCRYPT.exec(stored);
  if (bcrypt) return bounded({ kind: 'bcrypt', cost: Number(bcrypt[1]) });
  const argon2 = ARGON2.exec(stored);
  if (argon2) return bounded({ kind: 'argon2', memoryKiB: Number(argon2[1]), time: Number(argon2[2]), parallelism: Number(argon2[3]) });
  const pbkdf2Match = PBKDF2.exec(stored);
  if (pbkdf2Match) {
    const [, digest, iterations, salt, hash] = pbkdf2Match;
    return bounded({ kind: 'pbkdf2', digest: (digest ?? 'sha1') as Digest, iterations: Number(iterations), salt: decodeBase64(salt ?? ''), hash: decodeBase64(hash ?? '') });
  }
  const scryptMatch = SCRYPT.exec(stored);
  if (scryptMatch) {
    const [, form, n, r, p, salt, hash] = scryptMatch;
    const cost = form === 'ln' ? 2 ** Math.min(Number(n), 64) : Number(n);
    return bounded({ kind: 'scrypt', cost, blockSize: Number(r), parallelism: Number(p), salt: decodeBase64(salt ?? ''), hash: decodeBase64(hash ?? '') });
  }
  if (/^\$(2[aby]|argon2(id|i)|pbkdf2(-sha(1|256|512))?|scrypt)\$/.test(stored)) return 'is malformed';
  return 'is not a known hash (bcrypt, argon2id, argon2i, pbkdf2-sha256, pbkdf2-sha512 or scrypt)';
}

const MIB = 1024 * 1024;

/** The hash, or why its parameters are refused. */
function bounded(hash: ParsedHash): ParsedHash | string {
  switch (hash.kind) {
    case 'bcrypt':
      if (hash.cost < 4 || hash.cost > HASH_BOUNDS.bcryptCost) return `has a bcrypt cost of ${hash.cost}: from 4 to ${HASH_BOUNDS.bcryptCost} are accepted`;
      return hash;
    case 'argon2':
      if (hash.memoryKiB * 1024 > HASH_BOUNDS.memoryBytes) return `asks for ${Math.ceil(hash.memoryKiB / 1024)} MiB of memory: at most ${HASH_BOUNDS.memoryBytes / MIB} MiB are accepted`;
      if (hash.time < 1 || hash.time > HASH_BOUNDS.argon2Time) return `has an argon2 time cost of ${hash.time}: from 1 to ${HASH_BOUNDS.argon2Time} are accepted`;
      return refuseParallelism(hash, hash.parallelism);
    case 'pbkdf2':
      if (hash.iterations < 1 || hash.iterations > HASH_BOUNDS.pbkdf2Iterations) return `has ${hash.iterations} PBKDF2 iterations: from 1 to ${HASH_BOUNDS.pbkdf2Iterations} are accepted`;
      return refuseShortHash(hash);
    case 'scrypt': {
      // RFC 7914 §2: N a power of two above 1; one computation holds 128·N·r bytes.
      if (hash.cost < 2 || !Number.isSafeInteger(hash.cost) || (hash.cost & (hash.cost - 1)) !== 0) return 'has a scrypt cost (N) that is not a power of two';
      if (hash.blockSize < 1 || 128 * hash.cost * hash.blockSize > HASH_BOUNDS.memoryBytes) return `asks for more than ${HASH_BOUNDS.memoryBytes / MIB} MiB of memory`;
      const parallel = refuseParallelism(hash, hash.parallelism);
      return typeof parallel === 'string' ? parallel : refuseShortHash(hash);
    }
  }
}

function refuseParallelism(hash: ParsedHash, parallelism: number): ParsedHash | string {
  if (parallelism < 1 || parallelism > HASH_BOUNDS.parallelism) return `has a parallelism of ${parallelism}: from 1 to ${HASH_BOUNDS.parallelism} are accepted`;
  return hash;
}

// A derived key under 16 bytes (128 bits) would be too easy to match by chance.
function refuseShortHash(hash: ParsedHash & { hash: Buffer }): ParsedHash | string {
  return hash.hash.length < 16 ? 'is malformed (its derived key is shorter than 16 bytes)' : hash;
}

/** What is wrong with a hash offered for import, or undefined when it is accepted. */
export function passwordHashProblem(stored: string): string | undefined {
  const parsed = parseHash(stored);
  return typeof parsed === 'string' ? parsed : undefined;
}

const pbkdf2Async = promisify(pbkdf2);
const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, length: number, options: object) => Promise<Buffer>;

/** Whether the password matches a stored hash of any accepted kind; false for one out of bounds. */
export async function verifyHash(stored: string, password: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (typeof parsed === 'string') return false;
  switch (parsed.kind) {
    case 'argon2':
      return verifyArgon2(stored, password);
    case 'bcrypt':
      return verifyBcrypt(password, stored);
    case 'pbkdf2':
      return sameBytes(await pbkdf2Async(password, parsed.salt, parsed.iterations, parsed.hash.length, parsed.digest), parsed.hash);
    case 'scrypt': {
      const { cost: N, blockSize: r, parallelism: p } = parsed;
      const derived = await scryptAsync(password, parsed.salt, parsed.hash.length, { N, r, p, maxmem: 128 * N * r + MIB });
      return sameBytes(derived, parsed.hash);
    }
  }
}

function sameBytes(derived: Buffer, expected: Buffer): boolean {
  return derived.length === expected.length && timingSafeEqual(derived, expected);
}
