/**
 * The `idp` command: the only file that reads process.env, talks to the process and exits.
 * `idp serve` starts the service; every other command is the administrators' command line.
 */
// Only what every path needs is imported up front: a configuration error answers at once, and
// the command line never loads the HTTP server.
import { RefusedError, UsageError, type CliContext } from './cli/context.ts';
import { USAGE, helpText, wantsHelp } from './cli/help.ts';
import { systemClock } from './clock.ts';
import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { checkAuditLogExclusions, checkConfigFiles, parseConfig, type Config } from './config.ts';
import { describeStartup, startupLine } from './config/startup.ts';
import { DataDirError, lockEmbeddedDatabase, loadOrCreateSecret, secureDataDir } from './data-dir.ts';
import { AUDIT_EVENT_TYPES } from './events/audit-events.ts';
import { createOutboxSink } from './events/outbox-sink.ts';
import { auditTo, combineSinks, createLogSink } from './events/record.ts';
import type { Mailer } from './mail/mailer.ts';
import type { DurableStore } from './store/types.ts';
import type { MasterSecrets } from './tokens/secret-box.ts';
import { ensureSecretCheck, WRONG_SECRET_MESSAGE } from './tokens/secret-check.ts';

// Every file this process creates (the embedded database's, the generated secret, the socket the
// development server shares) is its owner's alone from the moment it exists.
process.umask(0o077);

const [command, ...args] = process.argv.slice(2);
/** `--json`: every answer, an error included, is one JSON document on stdout. */
const json = args.includes('--json');

/** An error as one line on stderr (after its details), or under --json as `{"error", "exit"}` on stdout. */
function printError(code: 1 | 2, message: string, details: readonly string[] = []): 1 | 2 {
  if (json) process.stdout.write(`${JSON.stringify({ error: message, exit: code, ...(details.length > 0 ? { details } : {}) })}\n`);
  else process.stderr.write([...details, message].map((line) => `${line}\n`).join(''));
  return code;
}
function isReadableFile(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function fail(code: 1 | 2, message: string): never {
  process.exit(printError(code, message));
}

// Help answers before the configuration is read: it needs none. A bare `idp` is a question, not
// a request to start a server (that is `idp serve`): the list of commands, exit 2.
if (command === undefined || command === 'help' || wantsHelp([command, ...args])) {
  if (command === undefined) fail(2, USAGE.join('\n'));
  for (const line of helpText(command === 'help' ? args : [command, ...args])) process.stdout.write(`${line}\n`);
  process.exit(0);
}

const parsed = parseConfig(process.env);
if (!parsed.ok) fail(2, parsed.message);
const config = parsed.config;
const { warnings } = parsed;
const unknownExclusions = checkAuditLogExclusions(config, AUDIT_EVENT_TYPES);
if (unknownExclusions) fail(2, unknownExclusions);
// The data directory holds the embedded database and the generated secret: refuse or tighten it first.
if (!config.databaseUrl || !config.secret) refuseDataDirProblem(() => secureDataDir(config.dataDir));

/** A DataDirError stops the process with its one line and exit code 2; anything else goes on. */
function refuseDataDirProblem<T>(use: () => T): T {
  try {
    return use();
  } catch (error) {
    if (error instanceof DataDirError) fail(2, error.message);
    throw error;
  }
}

/** The embedded database serves one process at a time: take it, or say who holds it. */
function takeEmbeddedDatabase(config: Config): () => void {
  if (config.databaseUrl) return () => {};
  const lock = lockEmbeddedDatabase(config.dataDir);
  if ('heldBy' in lock) {
    fail(2, `the embedded database in ${config.dataDir} is in use by a running server (pid ${lock.heldBy}); stop it, or set DATABASE_URL to share a PostgreSQL database`);
  }
  return lock.release;
}

function masterSecret(config: Config): Buffer {
  return config.secret ?? refuseDataDirProblem(() => loadOrCreateSecret(config.dataDir).secret);
}

/**
 * Opens the database's check value with the secrets in force (writing it on first use). A
 * wrong IDP_SECRET stops here with one line, not later at every use of a sealed value.
 */
async function refuseWrongSecret(durable: DurableStore, secrets: MasterSecrets, closing: () => Promise<void>): Promise<'current' | 'previous'> {
  const state = await ensureSecretCheck(durable, secrets);
  if (state !== 'wrong') return state;
  await closing().catch(() => {});
  const generated = config.secret ? '' : ` (IDP_SECRET is unset: the secret generated into ${config.dataDir}/secret was tried)`;
  return fail(2, `${WRONG_SECRET_MESSAGE}${generated}`);
}

async function serve(): Promise<void> {
  const missing = checkConfigFiles(config, isReadableFile);
  if (missing) fail(2, missing);
  // Before the server's modules: tracing patches pg, ioredis and http as they are imported.
  const stopTracing = config.otlpEndpoint ? await (await import('./telemetry.ts')).startTracing() : undefined;
  const [{ buildApp }, { ensureDemoData, formatDemoBanner }, { createLogger }, { openServices }, { startMaintenance }] = await Promise.all([
    import('./app.ts'), import('./cli/demo.ts'), import('./logging.ts'), import('./services.ts'), import('./maintenance.ts'),
  ]);
  const release = takeEmbeddedDatabase(config);
  const logger = createLogger(config.logLevel);
  for (const warning of warnings) logger.warn(warning);
  const services = await openServices({ config, secret: masterSecret(config), logger });
  const sealedUnder = await refuseWrongSecret(services.durable, services.secrets, () => services.close());
  if (sealedUnder === 'previous') {
    logger.warn('the database still holds values sealed under a previous secret (IDP_SECRET_PREVIOUS): run idp secrets reseal, then drop it');
  }
  await services.keys.ensureSigningKey();
  if (!config.databaseUrl && !config.production) {
    const demo = await ensureDemoData(services.durable);
    if (demo) process.stdout.write(formatDemoBanner(demo, config));
  }
  const app = await buildApp(config, services, logger);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // EADDRINUSE, EADDRNOTAVAIL, ENOTFOUND: the variables that chose the address say what to change.
    throw new Error(`PORT, HOST: cannot listen on ${config.host}:${config.port}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const bound = app.server.address();
  const startup = describeStartup(config, typeof bound === 'object' && bound ? bound.port : config.port);
  logger.info(startup, startupLine(startup));
  const stopMaintenance = startMaintenance(services, config, logger);
  const stopDelivery = services.startDelivery(logger);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stopMaintenance();
    stopDelivery();
    await app.close();
    await services.close();
    await stopTracing?.().catch(() => {});
    release();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A program on this terminal (idp sql's psql). Ctrl-C is the program's: this process ignores
 * SIGINT meanwhile, as a shell does for its foreground job, and keeps serving what it serves.
 */
function runProgram(program: string, programArgs: string[], env: Record<string, string>): Promise<number | undefined> {
  const ignore = () => {};
  process.on('SIGINT', ignore);
  return new Promise<number | undefined>((resolve) => {
    const child = spawn(program, programArgs, { stdio: 'inherit', env: { ...process.env, ...env } });
    child.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ENOENT' ? undefined : 1));
    child.once('exit', (code) => resolve(code ?? 1));
  }).finally(() => process.off('SIGINT', ignore));
}

/** The commands that seal or open with the master secret: they refuse a wrong one first. */
const SEALING_COMMANDS = new Set(['seed', 'keys', 'secrets', 'webhooks']);

async function cli(command: string): Promise<number> {
  const [{ runCli }, { openDurable, openSharedDurable }, { createStderrLogger }, { createMailer }] = await Promise.all([
    import('./cli/index.ts'), import('./services.ts'), import('./logging.ts'), import('./mail/setup.ts'),
  ]);
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
  // A change's event goes to webhooks too: written before the command closes the database.
  const outboxSink = createOutboxSink({
    outbox: async () => (await context.openDurable()).outbox,
    clock: systemClock,
    onError: (error) => log.error({ err: error instanceof Error ? error.message : String(error) }, 'an event could not be written to the outbox'),
  });
  const context: CliContext = {
    config,
    get secret() {
      return masterSecret(config);
    },
    clock: systemClock,
    json,
    async openDurable() {
      if (durable) return durable;
      // Beside a development server, its embedded database through the socket it shares.
      const shared = await openSharedDurable(config);
      release ??= shared ? () => {} : takeEmbeddedDatabase(config);
      durable = shared ?? (await openDurable(config));
      if (SEALING_COMMANDS.has(command)) {
        const opened = durable;
        await refuseWrongSecret(opened, { current: masterSecret(config), previous: config.previousSecrets }, () => opened.close());
      }
      return durable;
    },
    mailer() {
      mailer ??= createMailer(config, {
        info: (fields, message) => log.info(fields, message),
        warn: (fields, message) => void mailFailures.push(typeof fields.reason === 'string' ? `${message}: ${fields.reason}` : message),
      });
      return mailer;
    },
    closeMailer,
    audit: auditTo(combineSinks(createLogSink(), outboxSink), { log }),
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    readStdin,
    runProgram,
  };
  try {
    return await runCli(command, args.filter((a) => a !== '--json'), context);
  } catch (error) {
    if (error instanceof UsageError) return printError(2, error.message);
    if (error instanceof RefusedError) return printError(1, error.message, error.details);
    throw error;
  } finally {
    // Mail a command queued and did not report on is sent all the same; its failures are logged.
    for (const failure of await closeMailer()) log.warn({ mail: true }, failure);
    await outboxSink.flush();
    await durable?.close().catch(() => {});
    release?.();
  }
}

if (command === 'serve') {
  serve().catch((error: unknown) => fail(1, `idp serve: ${error instanceof Error ? error.message : String(error)}`));
} else {
  cli(command).then(
    (code) => process.exit(code),
    (error: unknown) => fail(1, `idp ${command}: ${error instanceof Error ? error.message : String(error)}`),
  );
}
