/**
 * User passwords: argon2id with parameters at OWASP's current minimum or above
 * (m = 19 MiB, t = 2, p = 1), encoded as PHC strings so parameters can change later.
 */
import { availableParallelism } from 'node:os';
import { hash } from '@node-rs/argon2';
import { verifyHash } from './password-hashes.ts';

// algorithm 2 is Argon2id in @node-rs/argon2 (a const enum, which type stripping cannot read).
export const ARGON2_PARAMS = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/**
 * At most one argon2 computation per core at a time; the rest wait their turn. Each takes
 * 19 MiB and a thread of libuv's pool (4 threads) for its whole run: more at once than there
 * are cores is no faster (sign-ins/s the same within noise on 2 cores), costs memory (peak
 * RSS under sign-in load 370-420 MB without the limit, under 300 MB with it) and leaves no
 * thread for signing tokens.
 */
const limitArgon2 = createConcurrencyLimit(availableParallelism());

export function hashPassword(password: string): Promise<string> {
  return limitArgon2(() => hash(password, ARGON2_PARAMS));
}

/**
 * Whether the password matches the service's argon2id hash or an imported one
 * (src/sources/password-hashes.ts); false (never a throw) for a malformed stored hash.
 */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await limitArgon2(() => verifyHash(stored, password));
  } catch {
    return false;
  }
}

/** Runs tasks with at most `limit` of them in progress, in the order they came. */
export function createConcurrencyLimit(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else running += 1;
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter (running stays) or is freed.
      if (waiting.length > 0) waiting.shift()?.();
      else running -= 1;
    }
  };
}

/** Whether a stored hash was made with other parameters than today's (then it is redone at sign-in). */
export function needsRehash(stored: string): boolean {
  const match = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(stored);
  if (!match) return true;
  const [, m, t, p] = match.map(Number);
  return m !== ARGON2_PARAMS.memoryCost || t !== ARGON2_PARAMS.timeCost || p !== ARGON2_PARAMS.parallelism;
}
