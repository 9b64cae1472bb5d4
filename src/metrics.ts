/**
 * A small Prometheus registry (text exposition format 0.0.4): counters and histograms with
 * labels. The request hook and the audit events feed it; GET /metrics reads it.
 */

type Labels = Record<string, string>;

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labelText = (labels: Labels) => {
  const entries = Object.entries(labels);
  return entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`;
};

interface Metric {
  render(): string[];
}

export class Counter implements Metric {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  readonly name: string;
  readonly help: string;

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  inc(labels: Labels = {}, by = 1): void {
    const key = labelText(labels);
    const entry = this.values.get(key);
    if (entry) entry.value += by;
    else this.values.set(key, { labels, value: by });
  }

  render(): string[] {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`,
      ...[...this.values.values()].map(({ labels, value }) => `${this.name}${labelText(labels)} ${value}`)];
  }
}

export class Histogram implements Metric {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  readonly name: string;
  readonly help: string;
  readonly buckets: readonly number[];

  constructor(name: string, help: string, buckets: readonly number[]) {
    this.name = name;
    this.help = help;
    this.buckets = buckets;
  }

  observe(labels: Labels, value: number): void {
    const key = labelText(labels);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= (this.buckets[i] as number)) (entry.counts[i] as number)++;
    entry.sum += value;
    entry.count += 1;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, count } of this.series.values()) {
      this.buckets.forEach((le, i) => lines.push(`${this.name}_bucket${labelText({ ...labels, le: String(le) })} ${counts[i]}`));
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${sum}`, `${this.name}_count${labelText(labels)} ${count}`);
    }
    return lines;
  }
}

export class Gauge implements Metric {
  private value = 0;
  readonly name: string;
  readonly help: string;

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  add(by: number): void {
    this.value += by;
  }

  render(): string[] {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`, `${this.name} ${this.value}`];
  }
}

/** The service's metrics. */
export function createMetrics() {
  const metrics = {
    requests: new Counter('idp_http_requests_total', 'HTTP requests by route, method and status.'),
    inFlight: new Gauge('idp_http_requests_in_flight', 'HTTP requests received and not yet answered (a draining instance shows what it still owes).'),
    latency: new Histogram('idp_http_request_duration_seconds', 'HTTP request latency by route.', [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]),
    tokens: new Counter('idp_tokens_issued_total', 'Token responses issued, by grant.'),
    signIns: new Counter('idp_sign_ins_total', 'Sign-in attempts, by result.'),
    rateLimited: new Counter('idp_rate_limited_total', 'Requests refused by a rate limit or a sign-in throttle, by kind.'),
    audit: new Counter('idp_audit_events_total', 'Audit events, by event.'),
  };
  return {
    ...metrics,
    render: () => `${Object.values(metrics).flatMap((m) => m.render()).join('\n')}\n`,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
