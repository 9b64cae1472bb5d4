/**
 * Audit events of a request: written on the request's own logger so that each line carries the
 * request id, and each event carries the request's context (record.ts EventContext): its id, the
 * source address (as IDP_TRUST_PROXY resolves it) and the client the request is about, where
 * there is one, in the log line and the outbox's `data` alike.
 */
import type { FastifyRequest } from 'fastify';
import type { AuditEvent } from '../../events/audit-events.ts';
import type { Audit, AuditSink, EventContext, RecordOptions } from '../../events/record.ts';

/** Fields bound to every event of a request: the authenticated client, where there is one. */
export type AuditFields = Pick<EventContext, 'client_id'>;
/**
 * Records an audit event of a request; `{ inOutbox: true }` for an event the admin layer wrote to
 * the outbox in its change's transaction (such as the `event` that admin/webhooks.ts returns).
 */
export type RequestAudit = (request: FastifyRequest, event: AuditEvent, bound?: AuditFields, options?: RecordOptions) => void;

/** The request's context now: its id, its source address, and the client it is about (`bound`'s, else the authorization request's). */
export function requestContext(request: FastifyRequest, bound: AuditFields = {}): EventContext {
  return { request_id: request.id, source_address: request.ip, client_id: request.authorizationTarget?.clientId, ...bound };
}

export function createRequestAudit(sink: AuditSink): RequestAudit {
  return (request, event, bound, options) => {
    sink.record(event, { log: request.log, context: requestContext(request, bound) }, options);
  };
}

/** The audit of one request, with `bound` fields (e.g. the authenticated client) on every event. */
export function auditOf(audit: RequestAudit, request: FastifyRequest, bound: AuditFields = {}): Audit {
  const requestAudit: Audit = (event, options) => audit(request, event, bound, options);
  requestAudit.context = () => requestContext(request, bound);
  return requestAudit;
}
