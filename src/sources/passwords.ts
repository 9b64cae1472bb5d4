/**
 * User passwords: argon2id with parameters at OWASP's current minimum or above
 * (m = 19 MiB, t = 2, p = 1), encoded as PHC strings so parameters can change later.
 */
import { hash, verify } from '@node-rs/argon2';

// algorithm 2 is Argon2id in @node-rs/argon2 (a const enum, which type stripping cannot read).
export const ARGON2_PARAMS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2_PARAMS);
}

/** Whether the password matches; false (never a throw) for a malformed stored hash. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

/** Whether a stored hash was made with other parameters than today's (then it is redone at sign-in). */
export function needsRehash(stored: string): boolean {
  const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(stored);
  if (!match) return true;
  const [, m, t, p] = match.map(Number);
  return m !== ARGON2_PARAMS.memoryCost || t !== ARGON2_PARAMS.timeCost || p !== ARGON2_PARAMS.parallelism;
}
