/**
 * The service's Prometheus metrics, on prom-client: the request hook and the audit events feed
 * them; GET /metrics reads them. Besides the service's own series: Node.js's (process, heap,
 * GC, event-loop lag), `idp_build_info{version}`, and the state of the connections to
 * PostgreSQL and Redis, read when scraped.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { foldedCounter, requestSeries } from './metrics-series.ts';
import type { DurableStore, EphemeralStore } from './store/types.ts';
import { SERVICE_VERSION } from './version.ts';

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
  /** The mailer's counts by result (sent, failed, dropped); a mailer that only logs has none. */
  mail?: { results?(): { sent: number; failed: number; dropped: number } };
  /** Webhook attempts of this process by result, and the backlog of the database. */
  webhooks?: {
    results: ReadonlyMap<string, number>;
    backlog(): Promise<{ pending: number; oldestAgeSeconds: number }>;
  };
}

/** The service's metrics; `render()` is the Prometheus text of them all. */
export function createMetrics(sources: MetricSources = {}) {
  const registry = new Registry();
  const registers = [registry];
  const { inFlight, ...requests } = requestSeries(registers);
  const metrics = {
    requests,
    tokens: foldedCounter({ name: 'idp_tokens_issued_total', help: 'Token responses issued, by grant.', labelName: 'grant', registers }),
    signIns: foldedCounter({ name: 'idp_sign_ins_total', help: 'Sign-in attempts, by result.', labelName: 'result', registers }),
    rateLimited: foldedCounter({ name: 'idp_rate_limited_total', help: 'Requests refused by a rate limit or a sign-in throttle, by kind.', labelName: 'kind', registers }),
    audit: foldedCounter({ name: 'idp_audit_events_total', help: 'Audit events, by event.', labelName: 'event', registers }),
  };
  new Gauge({ name: 'idp_build_info', help: 'The running version of the service; always 1.', labelNames: ['version'], registers }).set({ version: SERVICE_VERSION }, 1);
  addConnectionGauges(registers, sources);
  addMailCounter(registers, sources);
  if (sources.webhooks) addWebhookSeries(registers, sources.webhooks);
  return {
    ...metrics,
    inFlight,
    contentType: registry.contentType,
    render: async () => (await Registry.merge([registry, processMetrics()]).metrics()),
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

/** idp_mail_sent_total{result}, read from the mailer at each scrape (it runs apart from any request). */
function addMailCounter(registers: Registry[], { mail }: MetricSources): void {
  const results = mail?.results?.bind(mail);
  if (!results) return;
  new Counter({
    name: 'idp_mail_sent_total', help: 'Mail messages by result: sent, failed (the mail server refused or did not answer), dropped (never tried).', labelNames: ['result'], registers,
    collect() {
      this.reset();
      for (const [result, count] of Object.entries(results())) this.inc({ result }, count);
    },
  });
}

/**
 * Attempts by result, counted by the delivery; the backlog and its age, read from the database
 * at each scrape (the alert on a growing backlog reads these two).
 */
function addWebhookSeries(registers: Registry[], webhooks: NonNullable<MetricSources['webhooks']>): void {
  new Counter({
    name: 'idp_webhook_deliveries_total', help: 'Webhook delivery attempts made by this instance, by result (succeeded, or the kind of failure).', labelNames: ['result'], registers,
    collect() {
      this.reset();
      for (const [result, count] of webhooks.results) this.inc({ result }, count);
    },
  });
  let backlog: Promise<{ pending: number; oldestAgeSeconds: number }> | undefined;
  // One query per scrape serves both gauges.
  const read = () => (backlog ??= webhooks.backlog().finally(() => setTimeout(() => (backlog = undefined), 0)));
  new Gauge({
    name: 'idp_webhook_backlog', help: 'Webhook deliveries not yet made (pending) to enabled endpoints.', registers,
    async collect() {
      this.set((await read().catch(() => ({ pending: Number.NaN }))).pending);
    },
  });
  new Gauge({
    name: 'idp_webhook_oldest_pending_seconds', help: 'Age of the oldest event with a delivery still pending to an enabled endpoint (0 when none).', registers,
    async collect() {
      this.set((await read().catch(() => ({ oldestAgeSeconds: Number.NaN }))).oldestAgeSeconds);
    },
  });
}

export type Metrics = ReturnType<typeof createMetrics>;
