/**
 * An audit event already bound to its request (routes/shared/audit.ts binds it): one log line
 * operators can alert on. Grants and the protocol operations are handed one per request.
 */
export type Audit = (event: string, fields: Record<string, unknown>) => void;
