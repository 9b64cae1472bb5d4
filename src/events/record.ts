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

/**
 * Who and from where an event came: the request's id, its source address (as IDP_TRUST_PROXY
 * resolves it) and the client it is about, where known. The command line and the schedules have
 * none. The same fields reach the log line, the outbox's `data` (webhooks) and whatever else
 * keeps events.
 */
export interface EventContext {
  request_id?: string | undefined;
  source_address?: string | undefined;
  client_id?: string | undefined;
}

/**
 * Records one event, already bound to where it happened (a request, the command line, the
 * schedule). `context` tells that origin's context now (a request's client may become known
 * after its audit was made), for an event written in its change's transaction.
 */
export type Audit = ((event: AuditEvent, options?: RecordOptions) => void) & { context?: () => EventContext };

/** The logger a line goes to: the service's pino logger, a request's child of it, or the command line's. */
export interface AuditLogger {
  info(line: object, message: string): void;
}

/** Where an event happened. */
export interface EventOrigin {
  log: AuditLogger;
  /** Its context, before the event's own fields on every line and in every `data`. */
  context?: EventContext;
}

/**
 * An event's fields with its context before them: a field of the event's own wins wherever it
 * has a value (an event's `client_id` over the request's); a context field without one is left out.
 */
export function withContext(fields: Record<string, unknown>, context: EventContext | undefined): Record<string, unknown> {
  if (!context) return fields;
  const data: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(context)) if (value !== undefined) data[name] = value;
  for (const [name, value] of Object.entries(fields)) if (value !== undefined || !(name in data)) data[name] = value;
  return data;
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
 * One log line per event (`"audit": true`, `event`, the context, the event's fields), with the
 * event's type as the message; and the counters, when given. The request id is left to the
 * request's logger, which names it on every line of the request (`reqId`) already.
 */
export function createLogSink(counters?: AuditCounters): AuditSink {
  return {
    record(event, { log, context }) {
      const { type, ...fields } = event;
      const { request_id: _namedByLogger, ...shown } = context ?? {};
      log.info({ audit: true, event: type, ...withContext(fields, shown) }, type);
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
  const audit: Audit = (event, options) => sink.record(event, origin, options);
  audit.context = () => origin.context ?? {};
  return audit;
}
