/**
 * A moment as people read it on the account page: how long ago ("3 hours ago"), with the exact
 * time (the same on every instance: UTC to the minute) and the machine-readable one beside it
 * for the page's `<time datetime title>`.
 */

export interface ReadableTime {
  /** RFC 3339, for `datetime`. */
  iso: string;
  /** "just now", "5 minutes ago", "3 hours ago", "2 days ago", or the date when older than a month. */
  ago: string;
  /** The exact moment, for `title`: `2026-11-29 06:40 UTC`. */
  exact: string;
}

const MINUTE = 60;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const plural = (count: number, unit: string) => `${count} ${unit}${count === 1 ? '' : 's'} ago`;

function agoText(seconds: number, exact: string): string {
  if (seconds < MINUTE) return 'just now';
  if (seconds < HOUR) return plural(Math.floor(seconds / MINUTE), 'minute');
  if (seconds < DAY) return plural(Math.floor(seconds / HOUR), 'hour');
  if (seconds < 31 * DAY) return plural(Math.floor(seconds / DAY), 'day');
  return `on ${exact.slice(0, 10)}`;
}

/** `at` (a Date or milliseconds) as read at `nowSeconds`. */
export function readableTime(at: Date | number, nowSeconds: number): ReadableTime {
  const date = new Date(at);
  const iso = date.toISOString();
  const exact = `${iso.slice(0, 16).replace('T', ' ')} UTC`;
  return { iso, ago: agoText(Math.max(0, nowSeconds - Math.floor(date.getTime() / 1000)), exact), exact };
}
