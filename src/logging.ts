/**
 * The one pino logger. Secrets are redacted by path wherever they could appear in a log object;
 * request lines carry the route and status, never a query string or a body.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

/** Keys whose values are secrets wherever they appear in a log object (compared in lower case). */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  'authorization', 'cookie', 'set-cookie', 'password', 'new_password', 'confirm_password', 'client_secret', 'code',
  'code_verifier', 'refresh_token', 'access_token', 'id_token', 'id_token_hint', 'token', 'otp', 'secret',
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
 * Logs to stdout asynchronously: a line is handed to the next write, and the lines that came
 * meanwhile go out together in that one system call (one write per request line costs as much
 * as a store round trip under load). pino flushes what is pending synchronously at exit.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  // Child loggers' bindings are the service's own (request id, audit flag), never input.
  const options = { level, formatters: { log: censorSecrets } };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
