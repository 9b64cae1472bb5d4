/**
 * The embedded default's data directory: the PGlite database, the generated development secret,
 * and the lock file that tells the command line a server is using the embedded database.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
}

export function embeddedDatabasePath(dataDir: string): string {
  return join(dataDir, 'db');
}

/** Where a development server shares its embedded database with the command line. */
export function embeddedSocketPath(dataDir: string): string {
  return join(dataDir, 'db.sock');
}

/** Reads the development master secret from the data directory, creating it on first use. */
export function loadOrCreateSecret(dataDir: string): { secret: Buffer; created: boolean } {
  ensureDataDir(dataDir);
  const file = join(dataDir, 'secret');
  if (existsSync(file)) return { secret: Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url'), created: false };
  const secret = randomBytes(32);
  writeFileSync(file, `${secret.toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  return { secret, created: true };
}

function lockFile(dataDir: string): string {
  return join(dataDir, 'server.pid');
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid of a live server holding the embedded database, if any. */
export function embeddedDatabaseHolder(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockFile(dataDir), 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the embedded database for this process: PGlite allows one process at a time. Returns a
 * release function, or the pid of the live process that already holds it.
 */
export function lockEmbeddedDatabase(dataDir: string): { release: () => void } | { heldBy: number } {
  ensureDataDir(dataDir);
  const holder = embeddedDatabaseHolder(dataDir);
  if (holder !== undefined) return { heldBy: holder };
  rmSync(lockFile(dataDir), { force: true });
  const fd = openSync(lockFile(dataDir), 'wx', 0o600);
  writeFileSync(fd, `${process.pid}\n`);
  closeSync(fd);
  return {
    release: () => {
      if (embeddedDatabaseHolder(dataDir) === undefined) rmSync(lockFile(dataDir), { force: true });
    },
  };
}
