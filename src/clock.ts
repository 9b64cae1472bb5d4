/** Milliseconds since the Unix epoch. Injected everywhere so tests can move time. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/** Whole seconds since the Unix epoch, as JWT and OAuth timestamps are. */
export function epochSeconds(clock: Clock): number {
  return Math.floor(clock() / 1000);
}
