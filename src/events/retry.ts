/**
 * The Standard Webhooks retry schedule: at once, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h,
 * 20 h and 24 h after each failure, each delay with up to 10% of jitter (so that many deliveries
 * failed together do not come back together), times IDP_WEBHOOK_RETRY_SCALE.
 */

/** The delay before each retry, in seconds; the first attempt is at once. */
export const RETRY_DELAYS_SECONDS: readonly number[] = [5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400];

/** Attempts of one delivery at most: the first and one per delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** An endpoint that has failed this long is disabled (times the scale too). */
export const DISABLE_AFTER_FAILING_SECONDS = 5 * 86_400;

/**
 * Seconds until the retry that follows the failed attempt at `step` (0: the first attempt),
 * or undefined when none is left. `random` is in [0, 1).
 */
export function retryDelay(step: number, scale: number, random: number = Math.random()): number | undefined {
  const base = RETRY_DELAYS_SECONDS[step];
  if (base === undefined) return undefined;
  return base * scale * (1 + 0.1 * random);
}
