/**
 * A statement of a large import run again after a pause when it failed for a passing reason.
 */
import { AdminError } from '../errors.ts';

const ATTEMPTS = 3;
const PAUSE_MS = 1000;

/**
 * Runs a statement again after a pause when it failed for a passing reason (a timeout on a busy
 * database): a large import is thousands of them and should not stop at the first hiccup. A
 * refusal, or a row the database refuses (SQLSTATE class 23), fails at once.
 */
export async function retrying<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      const refused = error instanceof AdminError || String((error as { code?: unknown }).code ?? '').startsWith('23');
      if (refused || attempt >= ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS * attempt));
    }
  }
}
