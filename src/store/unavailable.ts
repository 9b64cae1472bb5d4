/**
 * Telling "the database or the store is away" from a bug: such failures become 503
 * temporarily_unavailable (and the process recovers by itself when the service returns);
 * anything else stays a 500.
 */

/** Node's socket errors, PostgreSQL's connection and shutdown classes, ioredis's give-ups. */
const CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN',
  '57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006',
]);
const MESSAGES = /Command timed out|Query read timeout|timeout exceeded when trying to connect|Connection terminated|connection timeout|Connection is closed|MaxRetriesPerRequest|Reached the max retries|Client has encountered a connection error|timeout exceeded when trying to connect|Stream isn't writeable|enableOfflineQueue|connect ECONNREFUSED/i;

export function isStoreUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown };
    if (typeof code === 'string' && CODES.has(code)) return true;
    if (name === 'MaxRetriesPerRequestError') return true;
    if (typeof message === 'string' && MESSAGES.test(message)) return true;
  }
  return false;
}
