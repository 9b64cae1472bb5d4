/**
 * `idp migrate`: applies pending migrations and says which. `context.openDurable()` applies them
 * on opening (every other command wants that), which would leave nothing to report, so this
 * command opens the database itself, taking the embedded database's lock as main.ts does.
 */
import { embeddedDatabasePath, embeddedSocketPath, lockEmbeddedDatabase } from '../data-dir.ts';
import type { Config } from '../config.ts';
import { openDurableStore, openSharedDurableStore } from '../store/sql/durable.ts';
import type { DurableStore } from '../store/types.ts';
import { parseCommand } from './args.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { report } from './output.ts';

async function migrateDatabase(config: Config | undefined, dataDir: string | undefined): Promise<string[]> {
  return migrateStore(await openDurableStore(config
    ? { databaseUrl: config.databaseUrl, listenUrl: config.databaseListenUrl, preparedStatements: config.databasePreparedStatements, poolSize: 2 }
    : { dataDir }));
}

async function migrateStore(durable: DurableStore): Promise<string[]> {
  try {
    return await durable.migrate();
  } finally {
    await durable.close().catch(() => {});
  }
}

/**
 * PGlite serves one process at a time: a running server keeps the embedded database, and
 * migrates it over the socket it shares it on (it applied the migrations it knows at start).
 */
async function migrateEmbedded(dataDir: string): Promise<string[]> {
  const lock = lockEmbeddedDatabase(dataDir);
  if ('heldBy' in lock) {
    const shared = await openSharedDurableStore(embeddedSocketPath(dataDir));
    if (shared) return migrateStore(shared);
    throw new UsageError(`the embedded database in ${dataDir} is in use by a running server (pid ${lock.heldBy}); stop it, or set DATABASE_URL to share a PostgreSQL database`);
  }
  try {
    return await migrateDatabase(undefined, embeddedDatabasePath(dataDir));
  } finally {
    lock.release();
  }
}

export async function runMigrate(args: string[], context: CliContext): Promise<ExitCode> {
  parseCommand({ usage: 'idp migrate', options: {}, positionals: [] }, args);
  const { databaseUrl, dataDir } = context.config;
  const applied = databaseUrl ? await migrateDatabase(context.config, undefined) : await migrateEmbedded(dataDir);
  report(context, { applied }, () =>
    applied.length === 0 ? ['database is up to date'] : applied.map((name) => `applied ${name}`),
  );
  return 0;
}
