/**
 * The command line's composition root: what an `idp` command other than `serve` runs on, each
 * part made on first use (the database, the mailer) and let go once, as the command ends. What
 * only the process may do (take the embedded database, read the master secret, stop on a wrong
 * one) main.ts lends it.
 */
import { systemClock } from '../clock.ts';
import type { Config } from '../config.ts';
import { createOutboxSink } from '../events/outbox-sink.ts';
import { auditTo, combineSinks, createLogSink, type Audit } from '../events/record.ts';
import { createStderrLogger } from '../logging.ts';
import type { Mailer } from '../mail/mailer.ts';
import { createMailer } from '../mail/setup.ts';
import type { DurableStore } from '../store/types.ts';
import type { MasterSecrets } from '../tokens/secret-box.ts';
import { openDurable, openSharedDurable } from './services.ts';

/** The commands that seal or open with the master secret: they refuse a wrong one first. */
const SEALING_COMMANDS = new Set(['seed', 'keys', 'secrets', 'webhooks']);

export interface CommandLineOptions {
  config: Config;
  command: string;
  /** The master secret in force (IDP_SECRET, or the one generated into the data directory). */
  secret(): Buffer;
  /** Takes the embedded database for this process (or stops it, naming who holds it); returns the release. */
  takeEmbeddedDatabase(): () => void;
  /** Stops the command when the database's check value opens under none of `secrets`. */
  refuseWrongSecret(durable: DurableStore, secrets: MasterSecrets, closing: () => Promise<void>): Promise<unknown>;
}

/** The parts of a command's context made here (CliContext's), and their end. */
export interface CommandLineRoot {
  openDurable(): Promise<DurableStore>;
  mailer(): Mailer;
  closeMailer(): Promise<string[]>;
  audit: Audit;
  /** Once, as the command ends: queued mail is sent, events reach the outbox, the database is let go. */
  close(): Promise<void>;
}

export function openCommandLine(options: CommandLineOptions): CommandLineRoot {
  const { config, command } = options;
  let durable: DurableStore | undefined;
  let release: (() => void) | undefined;
  const log = createStderrLogger(config.logLevel);
  let mailer: Mailer | undefined;
  /** Why messages were not sent (the mailer's warnings, whose reasons hold no secret): the command reports them. */
  let mailFailures: string[] = [];
  const closeMailer = async (): Promise<string[]> => {
    const closing = mailer;
    mailer = undefined;
    await closing?.close?.().catch((error: unknown) => void mailFailures.push(error instanceof Error ? error.message : String(error)));
    const failures = mailFailures;
    mailFailures = [];
    return failures;
  };
  async function openDurableOnce(): Promise<DurableStore> {
    if (durable) return durable;
    // Beside a development server, its embedded database through the socket it shares.
    const shared = await openSharedDurable(config);
    release ??= shared ? () => {} : options.takeEmbeddedDatabase();
    durable = shared ?? (await openDurable(config));
    if (SEALING_COMMANDS.has(command)) {
      const opened = durable;
      await options.refuseWrongSecret(opened, { current: options.secret(), previous: config.previousSecrets }, () => opened.close());
    }
    return durable;
  }
  // A change's event goes to webhooks too: written before the command closes the database.
  const outboxSink = createOutboxSink({
    outbox: async () => (await openDurableOnce()).outbox,
    clock: systemClock,
    onError: (error) => log.error({ err: error instanceof Error ? error.message : String(error) }, 'an event could not be written to the outbox'),
  });
  return {
    openDurable: openDurableOnce,
    mailer() {
      mailer ??= createMailer(config, {
        info: (fields, message) => log.info(fields, message),
        warn: (fields, message) => void mailFailures.push(typeof fields.reason === 'string' ? `${message}: ${fields.reason}` : message),
      });
      return mailer;
    },
    closeMailer,
    audit: auditTo(combineSinks(createLogSink(), outboxSink), { log }),
    async close() {
      // Mail a command queued and did not report on is sent all the same; its failures are logged.
      for (const failure of await closeMailer()) log.warn({ mail: true }, failure);
      await outboxSink.flush();
      await durable?.close().catch(() => {});
      release?.();
    },
  };
}
