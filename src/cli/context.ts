/** What every command of the command line receives; the commands never touch process.* themselves. */
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Audit } from '../events/record.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { DurableStore } from '../store/types.ts';
import type { MasterSecrets } from '../tokens/secret-box.ts';

/** 0 success, 1 a refused operation (one clear line), 2 bad usage. */
export type ExitCode = 0 | 1 | 2;

export interface CliContext {
  config: Config;
  /** The master secret in force: seals TOTP secrets and signing keys. */
  secret: Buffer;
  clock: Clock;
  /** `--json` was given: print one JSON document on stdout instead of text. */
  json: boolean;
  /** Opens the configured database with migrations applied; the caller closes nothing, main.ts does. */
  openDurable(): Promise<DurableStore>;
  /**
   * The mailer of the configuration, made on first use: IDP_SMTP_URL's; without it the log's
   * outside production, none (`available` false) in production. What it was given is sent
   * before the process exits (main.ts calls closeMailer as the command ends).
   */
  mailer(): Mailer;
  /**
   * Sends what mailer() was given, waiting for the mail server for a while at most (its
   * queue's flush at shutdown), and lets go of it: why messages were not sent, one line each
   * without any secret ([] when every one went, or nothing was given). Once, at the command's end.
   */
  closeMailer(): Promise<string[]>;
  /** Records an audit event: a JSON line on stderr, so that stdout stays the command's answer. */
  audit: Audit;
  out(line: string): void;
  err(line: string): void;
  readStdin(): Promise<string>;
  /**
   * Runs a program on this terminal (stdin, stdout and stderr its own) with `env` added to the
   * environment, and resolves with its exit code; undefined when there is no such program.
   */
  runProgram(program: string, args: string[], env: Record<string, string>): Promise<number | undefined>;
}

/** IDP_SECRET, which seals, and IDP_SECRET_PREVIOUS, which still open. */
export function masterSecrets(context: CliContext): MasterSecrets {
  return { current: context.secret, previous: context.config.previousSecrets };
}

/** A usage error: main prints its message as one line and exits 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A refused operation: main prints its message as one line and exits 1. `details` (such as
 * every wrong field of a seed file) go before it on stderr, or into the JSON error as `details`.
 */
export class RefusedError extends Error {
  override name = 'RefusedError';
  readonly details: readonly string[];
  constructor(message: string, details: readonly string[] = []) {
    super(message);
    this.details = details;
  }
}
