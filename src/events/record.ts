/**
 * Recording an audit event: every event of the service goes through an `Audit` to one
 * `AuditSink`. The log sink writes one log line per event and counts it in the metrics; the
 * outbox sink (outbox-sink.ts) writes the events that webhooks subscribe to.
 */
import type { AuditEvent } from './audit-events.ts';

/**
 * How an event is recorded: `inOutbox` when it was written to the outbox already, in the
 * transaction of the change it records (then only the other sinks take it).
 */
export interface RecordOptions {
  inOutbox?: boolean;
}

/** Records one event, already bound to where it happened (a request, the command line, the schedule). */
export type Audit = (event: AuditEvent, options?: RecordOptions) => void;

/** The logger a line goes to: the service's pino logger, a request's child of it, or the command line's. */
export interface AuditLogger {
  info(line: object, message: string): void;
}

/** Where an event happened. */
export interface EventOrigin {
  log: AuditLogger;
  /** What the origin adds to each line before the event's fields (a request's `source_address` and client). */
  bound?: Record<string, unknown>;
}

/** Where recorded events go. */
export interface AuditSink {
  record(event: AuditEvent, origin: EventOrigin, options?: RecordOptions): void;
}

/** Each event to every sink, in order. */
export function combineSinks(...sinks: AuditSink[]): AuditSink {
  return {
    record(event, origin, options) {
      for (const sink of sinks) sink.record(event, origin, options);
    },
  };
}

interface Counter {
  inc(label: string): void;
}

/** The service's counters that audit events feed (src/metrics.ts); the command line has none. */
export interface AuditCounters {
  audit: Counter;
  tokens: Counter;
  signIns: Counter;
  rateLimited: Counter;
}

/**
 * One log line per event (`"audit": true`, `event`, the origin's fields, the event's fields),
 * with the event's type as the message; and the counters, when given.
 */
export function createLogSink(counters?: AuditCounters): AuditSink {
  return {
    record(event, { log, bound }) {
      const { type, ...fields } = event;
      log.info({ audit: true, event: type, ...bound, ...fields }, type);
      if (counters) count(counters, event);
    },
  };
}

function count(counters: AuditCounters, event: AuditEvent): void {
  counters.audit.inc(event.type);
  if (event.type === 'token_issued') counters.tokens.inc(event.grant);
  if (event.type === 'sign_in') counters.signIns.inc(event.result);
  if (event.type === 'sign_in' && event.result === 'throttled') counters.rateLimited.inc('sign_in');
}

/** The `Audit` of one origin: each event goes to `sink` with it. */
export function auditTo(sink: AuditSink, origin: EventOrigin): Audit {
  return (event, options) => sink.record(event, origin, options);
}
