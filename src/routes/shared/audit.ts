/**
 * Audit events of a request: written on the request's own logger so that each line carries the
 * request id, with the source address (as IDP_TRUST_PROXY resolves it) and the client the
 * request is about, where there is one, before the event's own fields.
 */
import type { FastifyRequest } from 'fastify';
import type { AuditEvent } from '../../events/audit-events.ts';
import type { Audit, AuditSink, RecordOptions } from '../../events/record.ts';

/** Fields bound to every event of a request (e.g. the authenticated client). */
export type AuditFields = Record<string, unknown>;
/**
 * Records an audit event of a request; `{ inOutbox: true }` for an event the admin layer wrote to
 * the outbox in its change's transaction (such as the `event` that admin/webhooks.ts returns).
 */
export type RequestAudit = (request: FastifyRequest, event: AuditEvent, bound?: AuditFields, options?: RecordOptions) => void;

export function createRequestAudit(sink: AuditSink): RequestAudit {
  return (request, event, bound, options) => {
    const origin = { source_address: request.ip, client_id: request.authorizationTarget?.clientId, ...bound };
    sink.record(event, { log: request.log, bound: origin }, options);
  };
}

/** The audit of one request, with `bound` fields (e.g. the authenticated client) on every event. */
export function auditOf(audit: RequestAudit, request: FastifyRequest, bound: AuditFields = {}): Audit {
  return (event, options) => audit(request, event, bound, options);
}
