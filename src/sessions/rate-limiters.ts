/**
 * A budget of requests per subject in fixed one-minute windows: the token endpoint's
 * (IDP_TOKEN_RATE_LIMIT, per client and per source address) and the authorize endpoint's
 * (IDP_AUTHORIZE_RATE_LIMIT, per source address) and the administration API's
 * (IDP_ADMIN_API_RATE_LIMIT, per client), each a limiter of its own. The budget is
 * shared by every instance through the ephemeral store, but not asked for on every request: an
 * instance reserves a slice of the window's budget at once (INCRBY) and spends it locally. The
 * shared count is never exceeded; at most a slice per instance may go unspent in a window.
 * Beyond it: 429 slow_down, Retry-After.
 */
import type { Clock } from '../clock.ts';
import { OAuthError } from '../errors.ts';
import type { EphemeralStore } from '../store/types.ts';

const WINDOW_SECONDS = 60;
/** A slice is this fraction of the budget: one store round trip per slice instead of per request. */
const SLICES_PER_WINDOW = 20;

/** Returns a request's share of its budget: it failed, and only requests that succeed spend it. */
export type GiveBack = () => void;

export interface RateLimiter {
  /**
   * Counts one request for `subject` (e.g. `client:web` or `addr:10.0.0.1`); throws slow_down
   * when over. The result gives the request's share back, within the same window.
   */
  consume(subject: string): Promise<GiveBack>;
}

export function createRateLimiter(ephemeral: EphemeralStore, clock: Clock, perMinute: number): RateLimiter {
  const slice = Math.max(1, Math.floor(perMinute / SLICES_PER_WINDOW));
  // What this instance reserved and has not spent yet, for the current window only.
  let window = -1;
  let unspent = new Map<string, number>();
  let exhausted = new Set<string>();
  // One reservation in flight per subject: concurrent requests wait for it instead of each
  // reserving a slice of their own (which would overdraw the shared budget).
  let reserving = new Map<string, Promise<void>>();

  const refuse = (now: number) => new OAuthError('slow_down', 'Too many requests; slow down.', {
    retryAfter: Math.max(1, Math.ceil((window + 1) * WINDOW_SECONDS - now)),
  });

  async function reserve(subject: string, current: number): Promise<void> {
    const total = await ephemeral.rates.add(subject, current, WINDOW_SECONDS, slice);
    if (current !== window) return;
    // Of the slice just reserved, only what lies within the budget may be spent.
    const granted = Math.min(slice, perMinute - (total - slice));
    if (granted > 0) unspent.set(subject, (unspent.get(subject) ?? 0) + granted);
    else exhausted.add(subject);
  }

  /** A request's share of `subject`'s budget back to this instance, unless its window has passed. */
  function giveBackTo(subject: string, taken: number): void {
    if (taken !== window) return;
    unspent.set(subject, (unspent.get(subject) ?? 0) + 1);
    exhausted.delete(subject);
  }

  return {
    async consume(subject) {
      const now = clock() / 1000;
      const current = Math.floor(now / WINDOW_SECONDS);
      if (current !== window) {
        window = current;
        unspent = new Map();
        exhausted = new Set();
        reserving = new Map();
      }
      for (;;) {
        if (exhausted.has(subject)) throw refuse(now);
        const left = unspent.get(subject) ?? 0;
        if (left > 0) {
          unspent.set(subject, left - 1);
          return () => giveBackTo(subject, current);
        }
        let pending = reserving.get(subject);
        if (!pending) {
          const map = reserving;
          pending = reserve(subject, current).finally(() => map.delete(subject));
          map.set(subject, pending);
        }
        await pending;
        if (current !== window) return () => {};
      }
    },
  };
}
