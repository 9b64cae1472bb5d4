/** Kysely over embedded PGlite (development and tests), with its in-process change feed. */
import { chmodSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Kysely, PGliteDialect } from 'kysely';
import { CHANGE_CHANNEL, parseChange, type Connection } from './connection.ts';
import type { Database } from './tables.ts';

export async function connectEmbedded(dataDir: string | undefined): Promise<Connection> {
  // PGlite is loaded only when used: its WebAssembly is large and production never needs it.
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = dataDir === undefined ? new PGlite() : new PGlite(dataDir);
  await pglite.waitReady;
  if (dataDir !== undefined) keepPrivate(dataDir);
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return {
    kind: 'embedded',
    db,
    listen: async (onEvent) => {
      const unsubscribe = await pglite.listen(CHANGE_CHANNEL, (payload) => {
        const event = parseChange(payload);
        if (event) onEvent(event);
      });
      // In process: a notification cannot get lost on the way.
      return { state: () => 'listening', stop: unsubscribe };
    },
    share: async (socketPath) => {
      const { serveEmbedded } = await import('./embedded-socket.ts');
      return serveEmbedded(pglite, socketPath);
    },
    close: async () => {
      await db.destroy();
      if (!pglite.closed) await pglite.close();
    },
  };
}

/**
 * PGlite sets the mode of the files it unpacks on first use to 0666, whatever the umask: the
 * database (password hashes, in the WAL too) would be readable by every local user. Each of
 * them becomes its owner's alone; what PostgreSQL creates later asks for 0600 itself.
 */
function keepPrivate(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if ((stat.mode & 0o077) !== 0) chmodSync(path, stat.mode & 0o700);
  if (stat.isDirectory()) for (const name of readdirSync(path)) keepPrivate(join(path, name));
}
