/** Comparing secrets without telling how much of a guess was right. */
import { timingSafeEqual } from 'node:crypto';

/**
 * Whether `a` and `b` hold the same bytes (a string as its UTF-8), in time that depends on their
 * length only: `timingSafeEqual` itself throws on different lengths, and a length tells nothing
 * of the secret's bytes.
 */
export function sameBytes(a: Buffer | string, b: Buffer | string): boolean {
  const [x, y] = [typeof a === 'string' ? Buffer.from(a) : a, typeof b === 'string' ? Buffer.from(b) : b];
  return x.length === y.length && timingSafeEqual(x, y);
}
