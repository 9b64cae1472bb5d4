/** Durations on the command line: `1d`, `12h`, `30m`, `3600s` or plain seconds. */

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Whole seconds, or undefined when `text` is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^([0-9]{1,9})([smhd]?)$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * (UNIT_SECONDS[match[2] || 's'] as number);
}
