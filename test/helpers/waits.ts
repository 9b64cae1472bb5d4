/**
 * Waits that end on the event awaited, not on a guess of how long it takes: a slow or busy
 * machine makes the suite slower, never red. A wait fails at once when what it waits for has
 * failed (a process it depends on exited), and otherwise only at HANG_LIMIT_MS, a safety net so
 * that a hang still ends the run with its own message (below vitest's limit, vitest.config.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { sleep } from './relying-party.ts';

export const HANG_LIMIT_MS = 180_000;

export interface WaitOptions {
  /** Processes the awaited event depends on: the wait fails as soon as one of them exits. */
  processes?: readonly ChildProcess[];
  /** What to add to the failure message (a server's output, say). */
  detail?: () => string;
  /** The safety net; only for a wait that a test bounds itself on purpose. */
  limitMs?: number;
  /** Pause between two checks. */
  intervalMs?: number;
}

export function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Rejects once `child` has exited (at once when it already has); `stop` ends the watch. */
function watchExit(child: ChildProcess, what: string, detail: () => string): { exited: Promise<never>; stop: () => void } {
  let fail = () => {};
  const exited = new Promise<never>((_, reject) => {
    fail = () => reject(new Error(`${what}: process ${child.pid} exited with ${child.exitCode ?? child.signalCode}${detail()}`));
    if (hasExited(child)) fail();
    else child.once('exit', fail);
  });
  // An exit after the wait is over is no failure of it.
  exited.catch(() => undefined);
  return { exited, stop: () => child.removeListener('exit', fail) };
}

/**
 * Checks `check` until it gives a truthy value and returns that value. A check that throws
 * counts as "not yet" (its last error is in the failure message). Fails at once when one of
 * `processes` exits.
 */
export async function waitUntil<T>(what: string, check: () => T | Promise<T>, options: WaitOptions = {}): Promise<NonNullable<T>> {
  const detail = () => (options.detail ? `\n${options.detail()}` : '');
  // Each wait removes its exit listeners when it ends: a test may wait on one process many times.
  const watches = (options.processes ?? []).map((child) => watchExit(child, what, detail));
  try {
    return await checkUntil(what, check, options, watches.map((w) => w.exited), detail);
  } finally {
    for (const watch of watches) watch.stop();
  }
}

async function checkUntil<T>(what: string, check: () => T | Promise<T>, options: WaitOptions, exits: Promise<never>[], detail: () => string): Promise<NonNullable<T>> {
  const limitMs = options.limitMs ?? HANG_LIMIT_MS;
  const started = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      const value = await Promise.race([Promise.resolve().then(check), ...exits]);
      if (value) return value;
    } catch (error) {
      if (exits.length > 0 && (options.processes ?? []).some(hasExited)) await Promise.race(exits);
      lastError = error;
    }
    if (Date.now() - started > limitMs) {
      throw new Error(`${what}: still not after ${limitMs} ms (the limit for a hang)${lastError ? `; last error: ${String(lastError)}` : ''}${detail()}`);
    }
    await Promise.race([sleep(options.intervalMs ?? 50), ...exits]);
  }
}
