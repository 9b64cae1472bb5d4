/**
 * The embedded default's data directory: the PGlite database, the generated development secret,
 * and the lock file that tells the command line a server is using the embedded database.
 */
import { chmodSync, closeSync, existsSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { readMasterSecret } from './config/secrets.ts';

/** A data directory or generated secret the service must not use: one line naming it and what to do. */
export class DataDirError extends Error {}

export function ensureDataDir(dataDir: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  secureDataDir(dataDir);
}

/**
 * The directory holds password hashes (the database's files) and the master secret: only its
 * owner may enter it. One of ours that others may read becomes 0700; one owned by another user,
 * or that others may write to (a shared directory such as /tmp), is refused rather than changed.
 */
export function secureDataDir(dataDir: string): void {
  let stat;
  try {
    stat = statSync(dataDir);
  } catch {
    return; // not there yet: it is created 0700 when first used
  }
  const uid = process.getuid?.();
  if (!stat.isDirectory()) throw new DataDirError(`IDP_DATA_DIR: ${dataDir} is not a directory`);
  if (uid !== undefined && stat.uid !== uid) {
    throw new DataDirError(`IDP_DATA_DIR: ${dataDir} belongs to another user (uid ${stat.uid}, this process runs as uid ${uid}): use a directory of your own`);
  }
  if ((stat.mode & 0o022) !== 0) {
    throw new DataDirError(`IDP_DATA_DIR: ${dataDir} may be written by other users (mode ${(stat.mode & 0o777).toString(8)}): use a directory of your own, or chmod 700 it`);
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(dataDir, 0o700);
}

export function embeddedDatabasePath(dataDir: string): string {
  return join(dataDir, 'db');
}

/**
 * Where the process holding the embedded database serves it over the PostgreSQL protocol: named
 * as PostgreSQL names the socket of port 5432, so that `psql -h DATA_DIR` finds it.
 */
export function embeddedSocketPath(dataDir: string): string {
  return join(dataDir, '.s.PGSQL.5432');
}

/** Reads the development master secret from the data directory, creating it on first use. */
export function loadOrCreateSecret(dataDir: string): { secret: Buffer; created: boolean } {
  ensureDataDir(dataDir);
  const file = join(dataDir, 'secret');
  if (existsSync(file)) return { secret: readSecretFile(file), created: false };
  const secret = randomBytes(32);
  writeWhole(file, `${secret.toString('base64url')}\n`);
  return { secret, created: true };
}

/** The same rule as IDP_SECRET: an empty or cut file must not become a master secret of 0 bytes. */
function readSecretFile(file: string): Buffer {
  const text = readFileSync(file, 'utf8').trim();
  const read = text === '' ? { problem: 'is empty' } : readMasterSecret(text);
  if ('bytes' in read) return read.bytes;
  throw new DataDirError(`${file}: the generated master secret ${read.problem}; restore the file from a backup, or set IDP_SECRET to the secret the database was sealed with`);
}

/**
 * Written beside the file, then linked into place: a crash never leaves a cut secret behind,
 * and of two processes creating it at once the second fails (EEXIST) instead of overwriting.
 */
function writeWhole(file: string, text: string): void {
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, text, { mode: 0o600, flag: 'w' });
  try {
    linkSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
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
