/**
 * The overview's chart: sign-ins of the last 24 hours (the current hour and the 23 before it,
 * UTC) counted per hour by result from the audit log's `sign_in` events, in one query, and laid
 * out as stacked bars for a server-drawn SVG (no script, no chart library). The numbers go with
 * it as a table, the chart's text alternative.
 */
import type { AuditLogRepository } from '../store/contracts/audit-log.ts';

export const SIGN_IN_RESULTS = ['success', 'failure', 'throttled'] as const;
type Result = (typeof SIGN_IN_RESULTS)[number];

const HOUR_MS = 3600_000;
const HOURS = 24;

/** The drawing's size (SVG user units): the bars' area and room for the axis labels. */
const WIDTH = 720;
const HEIGHT = 220;
const LEFT = 40;
const TOP = 10;
const BOTTOM = 30;
const SLOT = (WIDTH - LEFT) / HOURS;
const BAR = SLOT * 0.7;

export interface HourOfSignIns {
  /** ISO time of the hour's start. */
  start: string;
  /** `14:00`, UTC. */
  label: string;
  counts: Record<Result, number>;
  total: number;
  /** The stacked bars' rectangles, bottom up; none for a result with no sign-in. */
  bars: Array<{ result: Result; x: number; y: number; width: number; height: number }>;
  /** Whether the axis names this hour (every third). */
  labelled: boolean;
  labelX: number;
}

export interface SignInChart {
  hours: HourOfSignIns[];
  totals: Record<Result, number>;
  /** The axis' top: the busiest hour's total (at least 1). */
  max: number;
  width: number;
  height: number;
  /** The bars' baseline and left edge, for the axis lines. */
  baseline: number;
  left: number;
}

const round = (n: number) => Math.round(n * 10) / 10;

export async function signInsPerHour(auditLog: Pick<AuditLogRepository, 'countPerHour'>, now: number): Promise<SignInChart> {
  const first = Math.floor(now / HOUR_MS) * HOUR_MS - (HOURS - 1) * HOUR_MS;
  const rows = await auditLog.countPerHour({ type: 'sign_in', field: 'result', since: new Date(first), until: new Date(first + HOURS * HOUR_MS) });
  const counts = Array.from({ length: HOURS }, () => ({ success: 0, failure: 0, throttled: 0 }));
  for (const row of rows) {
    const index = Math.floor((row.hour.getTime() - first) / HOUR_MS);
    const result = row.value as Result;
    if (counts[index] && (SIGN_IN_RESULTS as readonly string[]).includes(result)) counts[index][result] += row.count;
  }
  const max = Math.max(1, ...counts.map((c) => c.success + c.failure + c.throttled));
  const baseline = HEIGHT - BOTTOM;
  const scale = (baseline - TOP) / max;
  const hours = counts.map((hourCounts, index): HourOfSignIns => {
    const start = new Date(first + index * HOUR_MS);
    const x = round(LEFT + index * SLOT + (SLOT - BAR) / 2);
    let top = baseline;
    const bars = SIGN_IN_RESULTS.filter((result) => hourCounts[result] > 0).map((result) => {
      const height = hourCounts[result] * scale;
      top -= height;
      return { result, x, y: round(top), width: round(BAR), height: round(height) };
    });
    return {
      start: start.toISOString(), label: `${String(start.getUTCHours()).padStart(2, '0')}:00`, counts: hourCounts,
      total: hourCounts.success + hourCounts.failure + hourCounts.throttled, bars, labelled: index % 3 === 0, labelX: round(LEFT + index * SLOT + SLOT / 2),
    };
  });
  const totals = { success: 0, failure: 0, throttled: 0 };
  for (const c of counts) for (const result of SIGN_IN_RESULTS) totals[result] += c[result];
  return { hours, totals, max, width: WIDTH, height: HEIGHT, baseline, left: LEFT };
}
