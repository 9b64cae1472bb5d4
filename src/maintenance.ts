/** The maintenance every instance runs beside serving: `idp serve` starts it and stops it at shutdown. */
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { DurableStore } from './store/types.ts';
import type { KeyManager } from './tokens/keys.ts';
import { auditTo, combineSinks, createLogSink, type AuditSink } from './events/record.ts';
import { maxTokenLifetimeSeconds } from './tokens/key-rotation.ts';

/** How often each instance checks the rotation schedule (acting only when something is due). */
const MAINTENANCE_INTERVAL_MS = 10 * 60 * 1000;

/** Ended families and expired revocations are deleted this many at a time, at most this many times a tick. */
const PURGE_BATCH = 1000;
const PURGE_BATCHES_PER_TICK = 50;

/** What the maintenance reads and changes. */
export interface MaintenanceServices {
  durable: Pick<DurableStore, 'clients' | 'refreshTokens' | 'revocations' | 'webhooks'>;
  keys: Pick<KeyManager, 'maintain'>;
  clock: Clock;
  /** Where events go besides the log (the outbox). */
  outboxSink?: AuditSink;
}

/**
 * Every ten minutes, and once at start: signing keys published, rotated and retired on
 * schedule, and refresh token families past their end, revocations of expired tokens and
 * events past their retention deleted (in batches, so that a backlog never holds the database for long). Each instance
 * does it; the database makes it safe. Returns what stops it.
 */
export function startMaintenance(services: MaintenanceServices, config: Pick<Config, 'keyRotationInterval' | 'keyPublishAhead' | 'webhooks'>, logger: Logger): () => void {
  const maintainKeys = async () => {
    const clients = await services.durable.clients.list();
    const report = await services.keys.maintain({
      intervalSeconds: config.keyRotationInterval,
      publishAheadSeconds: config.keyPublishAhead,
      maxTokenLifetimeSeconds: maxTokenLifetimeSeconds(clients.map((c) => c.accessTokenLifetime)),
    });
    const sink = services.outboxSink ? combineSinks(createLogSink(), services.outboxSink) : createLogSink();
    const audit = auditTo(sink, { log: logger });
    for (const kid of report.published) audit({ type: 'key_published', kid, actor: 'schedule' });
    for (const kid of report.promoted) audit({ type: 'key_rotated', kid, actor: 'schedule' });
    for (const kid of report.retired) audit({ type: 'key_retired', kid, actor: 'schedule' });
  };
  /** Deletes in batches until a batch comes back short; returns how many. */
  const purgeInBatches = async (purge: (now: Date, limit: number) => Promise<number>) => {
    let deleted = 0;
    for (let batch = 0; batch < PURGE_BATCHES_PER_TICK; batch++) {
      const count = await purge(new Date(services.clock()), PURGE_BATCH);
      deleted += count;
      if (count < PURGE_BATCH) break;
    }
    return deleted;
  };
  const purgeEndedFamilies = async () => {
    const deleted = await purgeInBatches((now, limit) => services.durable.refreshTokens.purgeEnded(now, limit));
    if (deleted > 0) logger.info({ families: deleted }, 'refresh token families past their end deleted');
    // Revocations of tokens that have expired since: nothing is left for them to refuse.
    const expired = await purgeInBatches((now, limit) => services.durable.revocations.purgeExpired(now, limit));
    if (expired > 0) logger.info({ revocations: expired }, 'revocations of expired tokens deleted');
    // Events past IDP_EVENT_RETENTION, delivered or not, with their deliveries and attempts.
    const events = await purgeInBatches((now, limit) => services.durable.webhooks.purgeEvents(new Date(now.getTime() - config.webhooks.eventRetentionSeconds * 1000), limit));
    if (events > 0) logger.info({ events }, 'events past their retention deleted');
  };
  const failed = (what: string) => (error: unknown) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, `${what} failed`);
  const tick = () => {
    void maintainKeys().catch(failed('key maintenance'));
    void purgeEndedFamilies().catch(failed('refresh token family purge'));
  };
  tick();
  const timer = setInterval(tick, MAINTENANCE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
