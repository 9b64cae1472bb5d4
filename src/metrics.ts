/**
 * The service's Prometheus metrics, on prom-client: the request hook and the audit events feed
 * them; GET /metrics reads them. Besides the service's own series: Node.js's (process, heap,
 * GC, event-loop lag), `idp_build_info{version}`, and the state of the connections to
 * PostgreSQL and Redis, read when scraped.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { DurableStore, EphemeralStore } from './store/types.ts';

const VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;

/**
 * Node.js's own metrics, once per process: they watch the garbage collector and the event loop
 * with observers that are never stopped, so every app of a process (tests build many) shares them.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** What the connection metrics are read from when scraped. */
export interface MetricSources {
  durable?: Pick<DurableStore, 'poolStats'>;
  ephemeral?: Pick<EphemeralStore, 'connected'>;
}

/** The service's metrics; `render()` is the Prometheus text of them all. */
export function createMetrics(sources: MetricSources = {}) {
  const registry = new Registry();
  const registers = [registry];
  let inFlight = 0;
  new Gauge({
    name: 'idp_http_requests_in_flight', help: 'HTTP requests received and not yet answered (a draining instance shows what it still owes).', registers,
    collect() {
      this.set(inFlight);
    },
  });
  const metrics = {
    requests: requestSeries(registers),
    tokens: foldedCounter({ name: 'idp_tokens_issued_total', help: 'Token responses issued, by grant.', labelName: 'grant', registers }),
    signIns: foldedCounter({ name: 'idp_sign_ins_total', help: 'Sign-in attempts, by result.', labelName: 'result', registers }),
    rateLimited: foldedCounter({ name: 'idp_rate_limited_total', help: 'Requests refused by a rate limit or a sign-in throttle, by kind.', labelName: 'kind', registers }),
    audit: foldedCounter({ name: 'idp_audit_events_total', help: 'Audit events, by event.', labelName: 'event', registers }),
  };
  new Gauge({ name: 'idp_build_info', help: 'The running version of the service; always 1.', labelNames: ['version'], registers }).set({ version: VERSION }, 1);
  addConnectionGauges(registers, sources);
  return {
    ...metrics,
    inFlight: {
      inc: () => void inFlight++,
      dec: () => void inFlight--,
    },
    contentType: registry.contentType,
    render: async () => (await Registry.merge([registry, processMetrics()]).metrics()),
  };
}

/*
 * The series below count in plain maps, one lookup by a string key per event, and are folded
 * into their prom-client metric when scraped: prom-client validates and hashes the label object
 * of every call, which cost more per request than the rest of the request's bookkeeping.
 */

/** A counter with one label: `inc(value)` counts one event with that label value. */
function foldedCounter(options: { name: string; help: string; labelName: string; registers: Registry[] }): { inc(value: string): void } {
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
/** One route's latencies as prom-client's histogram keeps them: per bucket (not cumulative), sum, count. */
interface LatencySeries { labels: { route: string }; bucketValues: Record<number, number>; sum: number; count: number }

/** idp_http_requests_total{route,method,status} and idp_http_request_duration_seconds{route}. */
function requestSeries(registers: Registry[]): { record(route: string, method: string, status: number, seconds: number): void } {
  const counts = new Map<string, RequestCount>();
  const latencies = new Map<string, LatencySeries>();
  new Counter({
    name: 'idp_http_requests_total', help: 'HTTP requests by route, method and status.', labelNames: ['route', 'method', 'status'], registers,
    collect() {
      this.reset();
      for (const { labels, count } of counts.values()) this.inc(labels, count);
    },
  });
  new Histogram({
    name: 'idp_http_request_duration_seconds', help: 'HTTP request latency by route.', labelNames: ['route'], registers, buckets: LATENCY_BUCKETS,
    collect() {
      // Exported from prom-client's own per-series shape (its createBaseValues): its API takes
      // observations one by one only. Copies, so that an export never sees a half-made series.
      const hashMap: Record<string, LatencySeries> = {};
      for (const [route, s] of latencies) hashMap[route] = { labels: s.labels, bucketValues: { ...s.bucketValues }, sum: s.sum, count: s.count };
      (this as unknown as { hashMap: Record<string, LatencySeries> }).hashMap = hashMap;
    },
  });
  return {
    record(route, method, status, seconds) {
      const key = `${route}\u0000${method}\u0000${status}`;
      const counted = counts.get(key);
      if (counted) counted.count++;
      else counts.set(key, { labels: { route, method, status: String(status) }, count: 1 });
      let series = latencies.get(route);
      if (!series) {
        series = { labels: { route }, bucketValues: Object.fromEntries(LATENCY_BUCKETS.map((b) => [b, 0])), sum: 0, count: 0 };
        latencies.set(route, series);
      }
      // The first bucket the value fits in (prom-client's findBound); above them all, only the count.
      for (const bound of LATENCY_BUCKETS) {
        if (seconds <= bound) {
          series.bucketValues[bound] = (series.bucketValues[bound] ?? 0) + 1;
          break;
        }
      }
      series.sum += seconds;
      series.count++;
    },
  };
}

/** Read at each scrape: a pool that is busy or waiting, and a Redis connection that is down. */
function addConnectionGauges(registers: Registry[], { durable, ephemeral }: MetricSources): void {
  if (durable?.poolStats) {
    const poolStats = durable.poolStats.bind(durable);
    new Gauge({
      name: 'idp_db_pool_connections_in_use', help: 'PostgreSQL connections of the pool checked out by a query or transaction.', registers,
      collect() {
        this.set(poolStats().inUse);
      },
    });
    new Gauge({
      name: 'idp_db_pool_waiting', help: 'Queries waiting for a PostgreSQL connection of the pool.', registers,
      collect() {
        this.set(poolStats().waiting);
      },
    });
  }
  if (ephemeral?.connected) {
    const connected = ephemeral.connected.bind(ephemeral);
    new Gauge({
      name: 'idp_redis_connected', help: '1 while the connection to Redis is ready, else 0.', registers,
      collect() {
        this.set(connected() ? 1 : 0);
      },
    });
  }
}

export type Metrics = ReturnType<typeof createMetrics>;
