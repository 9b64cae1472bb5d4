/**
 * The series counted on every request (src/metrics.ts registers them): kept in plain maps, a
 * lookup or two per event, and folded into their prom-client metric when scraped. prom-client
 * validates and hashes the label object of every call, which cost more per request than the
 * rest of the request's bookkeeping.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** A counter with one label: `inc(value)` counts one event with that label value. */
export function foldedCounter(options: { name: string; help: string; labelName: string; registers: Registry[] }): { inc(value: string): void } {
  const counts = new Map<string, number>();
  const { labelName } = options;
  new Counter({
    name: options.name, help: options.help, labelNames: [labelName], registers: options.registers,
    collect() {
      this.reset();
      for (const [value, count] of counts) this.inc({ [labelName]: value }, count);
    },
  });
  return { inc: (value) => void counts.set(value, (counts.get(value) ?? 0) + 1) };
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface RequestCount { labels: { route: string; method: string; status: string }; count: number }
/** One route's latencies: per bucket (not cumulative; by index in LATENCY_BUCKETS), sum, count. */
interface LatencySeries { labels: { route: string }; buckets: number[]; sum: number; count: number }
/** A route's series; counts by method, then status (no key strings to build per request). */
interface RouteSeries { latency: LatencySeries; counts: Map<string, Map<number, RequestCount>> }

export interface RequestSeries {
  /** A request answered. */
  record(route: string, method: string, status: number, seconds: number): void;
  inFlight: { inc(): void; dec(): void };
}

/** idp_http_requests_total{route,method,status}, idp_http_requests_in_flight and idp_http_request_duration_seconds{route}. */
export function requestSeries(registers: Registry[]): RequestSeries {
  const routes = new Map<string, RouteSeries>();
  let inFlight = 0;
  new Counter({
    name: 'idp_http_requests_total', help: 'HTTP requests by route, method and status.', labelNames: ['route', 'method', 'status'], registers,
    collect() {
      this.reset();
      for (const { counts } of routes.values()) {
        for (const byStatus of counts.values()) for (const { labels, count } of byStatus.values()) this.inc(labels, count);
      }
    },
  });
  new Gauge({
    name: 'idp_http_requests_in_flight', help: 'HTTP requests received and not yet answered (a draining instance shows what it still owes).', registers,
    collect() {
      this.set(inFlight);
    },
  });
  new Histogram({
    name: 'idp_http_request_duration_seconds', help: 'HTTP request latency by route.', labelNames: ['route'], registers, buckets: LATENCY_BUCKETS,
    collect() {
      // Exported from prom-client's own per-series shape (its createBaseValues): its API takes
      // observations one by one only. Copies, so that an export never sees a half-made series.
      const hashMap: Record<string, unknown> = {};
      for (const [route, { latency: s }] of routes) {
        const bucketValues = Object.fromEntries(LATENCY_BUCKETS.map((bound, i) => [bound, s.buckets[i] ?? 0]));
        hashMap[route] = { labels: s.labels, bucketValues, sum: s.sum, count: s.count };
      }
      (this as unknown as { hashMap: Record<string, unknown> }).hashMap = hashMap;
    },
  });
  const routeSeries = (route: string): RouteSeries => {
    const latency = { labels: { route }, buckets: LATENCY_BUCKETS.map(() => 0), sum: 0, count: 0 };
    const series = { latency, counts: new Map<string, Map<number, RequestCount>>() };
    routes.set(route, series);
    return series;
  };
  return {
    inFlight: {
      inc: () => void inFlight++,
      dec: () => void inFlight--,
    },
    record(route, method, status, seconds) {
      const { latency, counts } = routes.get(route) ?? routeSeries(route);
      let byStatus = counts.get(method);
      if (!byStatus) counts.set(method, (byStatus = new Map()));
      const counted = byStatus.get(status);
      if (counted) counted.count++;
      else byStatus.set(status, { labels: { route, method, status: String(status) }, count: 1 });
      // The first bucket the value fits in (prom-client's findBound); above them all, only the count.
      for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
        if (seconds <= (LATENCY_BUCKETS[i] ?? 0)) {
          latency.buckets[i] = (latency.buckets[i] ?? 0) + 1;
          break;
        }
      }
      latency.sum += seconds;
      latency.count++;
    },
  };
}
