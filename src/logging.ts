/**
 * The one pino logger. Secrets are redacted by path wherever they could appear in a log object;
 * request lines carry the route and status, never a query string or a body.
 */
import { writeSync } from 'node:fs';
import { pino, type DestinationStream, type Logger } from 'pino';

/** Keys whose values are secrets wherever they appear in a log object (compared in lower case). */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  'authorization', 'cookie', 'set-cookie', 'password', 'new_password', 'confirm_password', 'client_secret', 'code',
  'code_verifier', 'refresh_token', 'access_token', 'id_token', 'id_token_hint', 'token', 'otp', 'secret', 'recovery_code',
  'password_hash', 'passwordhash', 'secretdata', 'totp_secret',
]);
const CENSOR = '[redacted]';
const MAX_DEPTH = 3;

/**
 * A log object with the value of every secret-named key replaced, at the top level and in
 * nested objects (three deep). One pass over the keys with a set lookup each: pino's path
 * redaction cost more per line than anything else the logger does. Returns the object itself
 * when nothing needed replacing; never changes it.
 */
export function censorSecrets(object: Record<string, unknown>, depth = 0): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const key of Object.keys(object)) {
    const value = object[key];
    let replaced = value;
    if (SECRET_KEYS.has(key.toLowerCase())) replaced = CENSOR;
    else if (depth < MAX_DEPTH && isPlainObject(value)) replaced = censorSecrets(value, depth + 1);
    if (replaced !== value) {
      copy ??= { ...object };
      copy[key] = replaced;
    }
  }
  return copy ?? object;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Logs to stdout asynchronously: lines are gathered and handed on together (one write per
 * request line costs as much as a store round trip under load). What is pending is written
 * synchronously at exit.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  // Child loggers' bindings are the service's own (request id, audit flag), never input.
  const options = { level, formatters: { log: censorSecrets } };
  return pino(options, destination ?? stdoutDestination());
}

/**
 * The command line's logger: JSON lines on stderr, so that stdout stays the command's answer
 * (its text, or its one --json document); written at once, as the command exits right after.
 */
export function createStderrLogger(level: string): Logger {
  return createLogger(level, pino.destination({ dest: 2, sync: true }));
}

/**
 * Each write to stdout costs a hand-over to libuv's thread pool, whose wake-up costs the
 * main thread more than the line itself; sonic-boom (pino's asynchronous destination) writes
 * whenever it is idle. Lines are therefore gathered while every turn of the event loop brings
 * more (a server under load) up to WRITE_BYTES, and handed on as soon as a turn brings none (so
 * a quiet server's lines go out at once). sonic-boom gets buffers (its buffer mode): holding
 * strings, it measured the byte length of all it held on every write.
 */
const WRITE_BYTES = 8 * 1024;

function stdoutDestination(): DestinationStream & { flush(callback?: (error?: Error) => void): void; flushSync(): void } {
  let pending: string[] = [];
  let pendingBytes = 0;
  let scheduled = false;
  let addedSinceCheck = false;
  const take = () => {
    const lines = pending.join('');
    pending = [];
    pendingBytes = 0;
    return lines;
  };
  const handOn = () => {
    // Buffer mode takes buffers; its type declares strings only.
    if (pending.length > 0) sonic.write(Buffer.from(take()) as unknown as string);
  };
  const check = () => {
    if (addedSinceCheck && pendingBytes < WRITE_BYTES) {
      addedSinceCheck = false;
      setImmediate(check);
      return;
    }
    scheduled = false;
    addedSinceCheck = false;
    handOn();
  };
  // Registered before sonic-boom's own exit handler (made with it below), so this runs first:
  // sonic-boom's pending lines, then ours, in order, synchronously.
  process.once('exit', () => {
    try {
      sonic.flushSync();
      if (pending.length > 0) writeSync(1, take());
    } catch {
      // Nowhere left to say it.
    }
  });
  const sonic = pino.destination({ dest: 1, sync: false, contentMode: 'buffer' });
  return {
    write(line: string) {
      pending.push(line);
      pendingBytes += line.length;
      addedSinceCheck = true;
      if (!scheduled) {
        scheduled = true;
        setImmediate(check);
      }
    },
    flush(callback) {
      handOn();
      sonic.flush(callback);
    },
    flushSync() {
      handOn();
      sonic.flushSync();
    },
  };
}
