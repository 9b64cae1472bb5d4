/** The maintenance every instance runs beside serving: `idp serve` starts it and stops it at shutdown. */
import type { Logger } from 'pino';
import type { Clock } from './clock.ts';
import type { Config } from './config.ts';
import type { DurableStore } from './store/types.ts';
import type { KeyManager } from './tokens/keys.ts';
import { keyChangeRecord } from './admin/keys.ts';
import { purgesAt } from './events/audit-policy.ts';
import { recorderOf } from './events/in-transaction.ts';
import { auditTo, combineSinks, createLogSink, type AuditSink } from './events/record.ts';
import { maxTokenLifetimeSeconds } from './tokens/key-rotation.ts';

/** How often each instance checks the rotation schedule (acting only when something is due). */
const MAINTENANCE_INTERVAL_MS = 10 * 60 * 1000;

/** Ended families and expired revocations are deleted this many at a time, at most this many times a tick. */
const PURGE_BATCH = 1000;
const PURGE_BATCHES_PER_TICK = 50;

/** What a purge did: rows deleted, and in how many statements. */
export interface Purged {
  deleted: number;
  batches: number;
}

/** Deletes in batches (each its own short statement) until a batch comes back short, or the tick's share is done. */
async function inBatches(purge: (now: Date, limit: number) => Promise<number>, clock: Clock): Promise<Purged> {
  const done = { deleted: 0, batches: 0 };
  while (done.batches < PURGE_BATCHES_PER_TICK) {
    const count = await purge(new Date(clock()), PURGE_BATCH);
    done.deleted += count;
    done.batches += 1;
    if (count < PURGE_BATCH) break;
  }
  return done;
}

/**
 * Events past IDP_EVENT_RETENTION (delivered or not, with their deliveries and attempts) and, for
 * the types the audit log keeps, past IDP_AUDIT_RETENTION as well: a sign-in never waits for
 * more than one batch's locks, and rows another transaction holds are left for the next tick.
 */
export async function purgeExpiredEvents(durable: Pick<DurableStore, 'auditLog'>, config: Pick<Config, 'webhooks' | 'auditLog'>, clock: Clock): Promise<Purged> {
  const total = { deleted: 0, batches: 0 };
  for (const purge of purgesAt(config.auditLog, config.webhooks.eventRetentionSeconds, new Date(clock()))) {
    const done = await inBatches((_now, limit) => durable.auditLog.purge(purge, limit), clock);
    total.deleted += done.deleted;
    total.batches += done.batches;
  }
  return total;
}

/** What the maintenance reads and changes. */
export interface MaintenanceServices {
  durable: Pick<DurableStore, 'clients' | 'refreshTokens' | 'revocations' | 'auditLog'>;
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
export function startMaintenance(services: MaintenanceServices, config: Pick<Config, 'keyRotationInterval' | 'keyPublishAhead' | 'webhooks' | 'auditLog'>, logger: Logger): () => void {
  const maintainKeys = async () => {
    const clients = await services.durable.clients.list();
    const sink = services.outboxSink ? combineSinks(createLogSink(), services.outboxSink) : createLogSink();
    // Written in the key lock's transaction, then logged (the outbox sink skips what is written already).
    const { record, logCommitted } = keyChangeRecord({ recorder: recorderOf(auditTo(sink, { log: logger })), clock: services.clock, actor: 'schedule' });
    await services.keys.maintain({
      intervalSeconds: config.keyRotationInterval,
      publishAheadSeconds: config.keyPublishAhead,
      maxTokenLifetimeSeconds: maxTokenLifetimeSeconds(clients.map((c) => c.accessTokenLifetime)),
    }, record);
    logCommitted();
  };
  const purgeInBatches = (purge: (now: Date, limit: number) => Promise<number>) => inBatches(purge, services.clock).then((done) => done.deleted);
  const purgeEndedFamilies = async () => {
    const deleted = await purgeInBatches((now, limit) => services.durable.refreshTokens.purgeEnded(now, limit));
    if (deleted > 0) logger.info({ families: deleted }, 'refresh token families past their end deleted');
    // Revocations of tokens that have expired since: nothing is left for them to refuse.
    const expired = await purgeInBatches((now, limit) => services.durable.revocations.purgeExpired(now, limit));
    if (expired > 0) logger.info({ revocations: expired }, 'revocations of expired tokens deleted');
    const { deleted: events } = await purgeExpiredEvents(services.durable, config, services.clock);
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
