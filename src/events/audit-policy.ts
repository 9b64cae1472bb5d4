/**
 * Which events the audit log keeps (IDP_AUDIT_RETENTION, IDP_AUDIT_LOG_EXCLUDE), and until when:
 * read from the configuration once, by the outbox's writes (the store), the outbox sink (which
 * writes nothing for an event neither audited nor subscribed) and the maintenance's purge.
 */
import type { Config } from '../config.ts';

export type AuditLogSettings = Config['auditLog'];

/** Whether an event of `type` is kept in the audit log. */
export function auditsType(settings: AuditLogSettings): (type: string) => boolean {
  if (settings.retentionSeconds === 0) return () => false;
  const excluded = new Set(settings.excludedTypes);
  return (type) => !excluded.has(type);
}

/**
 * What the purge deletes at `now`: an event is kept while either of its reasons keeps it, the
 * webhooks' retention (its deliveries and their log) or, for an audited type, the audit log's.
 * So events past both go (one range of the time index), and then events of the types the log
 * does not keep, once past the webhooks' retention (a range of the type index).
 */
export function purgesAt(settings: AuditLogSettings, webhookRetentionSeconds: number, now: Date): Array<{ before: Date; types?: readonly string[] }> {
  const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000);
  const webhookBefore = ago(webhookRetentionSeconds);
  const auditBefore = ago(settings.retentionSeconds);
  const both = auditBefore < webhookBefore ? auditBefore : webhookBefore;
  const unaudited = settings.excludedTypes.length > 0 && both < webhookBefore ? [{ before: webhookBefore, types: settings.excludedTypes }] : [];
  return [{ before: both }, ...unaudited];
}
