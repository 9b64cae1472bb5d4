/**
 * Audit events: one log line each (`"audit": true` and the `event`), written on the request's
 * own logger so that it carries the request id, with the source address (as IDP_TRUST_PROXY
 * resolves it) and the client the request is about, where there is one. The rest of a line is
 * the caller's fields; secrets never go in (and the logger censors them by name anyway).
 */
import type { FastifyRequest } from 'fastify';
import type { Metrics } from '../../metrics.ts';

export type AuditFields = Record<string, unknown>;
/** An audit event already bound to a request: what grants and the sign-in steps are handed. */
export type Audit = (event: string, fields: AuditFields) => void;
/** Writes an audit event of a request. */
export type RequestAudit = (request: FastifyRequest, event: string, fields: AuditFields) => void;

/** `observe` sees each line written (the metrics count them). */
export function createRequestAudit(observe: (event: string, line: AuditFields) => void): RequestAudit {
  return (request, event, fields) => {
    const line = { audit: true, event, source_address: request.ip, client_id: request.authorizationTarget?.clientId, ...fields };
    request.log.info(line, event);
    observe(event, line);
  };
}

/** One audit line per event, on the request's logger, counted in the metrics too. */
export function createCountedAudit(metrics: Metrics): RequestAudit {
  return createRequestAudit((event, fields) => {
    metrics.audit.inc(event);
    if (event === 'token_issued') metrics.tokens.inc(String(fields.grant));
    if (event === 'sign_in') metrics.signIns.inc(String(fields.result));
    if (event === 'sign_in' && fields.result === 'throttled') metrics.rateLimited.inc('sign_in');
  });
}

/** The audit of one request, with `bound` fields (e.g. the authenticated client) on every event. */
export function auditOf(audit: RequestAudit, request: FastifyRequest, bound: AuditFields = {}): Audit {
  return (event, fields) => audit(request, event, { ...bound, ...fields });
}
