/**
 * The one pino logger. Secrets are redacted by path wherever they could appear in a log object;
 * request lines carry the route and status, never a query string or a body.
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export const REDACTED_PATHS = [
  'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization',
  'cookie', '*.cookie', 'headers.cookie', 'req.headers.cookie', 'set-cookie', '*["set-cookie"]',
  'password', '*.password', 'new_password', '*.new_password', 'confirm_password', '*.confirm_password',
  'client_secret', '*.client_secret', 'code', '*.code', 'code_verifier', '*.code_verifier',
  'refresh_token', '*.refresh_token', 'access_token', '*.access_token', 'id_token', '*.id_token',
  'id_token_hint', '*.id_token_hint', 'token', '*.token', 'otp', '*.otp', 'secret', '*.secret',
];

/**
 * Logs to stdout asynchronously: a line is handed to the next write, and the lines that came
 * meanwhile go out together in that one system call (one write per request line costs as much
 * as a store round trip under load). pino flushes what is pending synchronously at exit.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}
