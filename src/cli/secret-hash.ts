/**
 * `idp secret-hash`: reads a client secret an administrator chose on stdin and prints the hash to
 * put in `clients.secret_hash` (the README's Editing clients with SQL). Needs no database and no master secret.
 */
import { MIN_CLIENT_SECRET_LENGTH, hashClientSecret } from '../tokens/opaque.ts';
import { parseCommand } from './args.ts';
import { RefusedError, type CliContext, type ExitCode } from './context.ts';
import { report } from './output.ts';

export async function runSecretHash(args: string[], context: CliContext): Promise<ExitCode> {
  parseCommand({ usage: 'echo "$SECRET" | idp secret-hash', options: {}, positionals: [] }, args);
  // `echo` and here-strings add one newline; it is not part of the secret.
  const secret = (await context.readStdin()).replace(/\r?\n$/, '');
  // A salted SHA-256 protects only a long random secret (src/tokens/opaque.ts).
  if (secret.length < MIN_CLIENT_SECRET_LENGTH) {
    throw new RefusedError(`a client secret must be at least ${MIN_CLIENT_SECRET_LENGTH} characters (got ${secret.length} on stdin)`);
  }
  const hash = hashClientSecret(secret);
  report(context, { secret_hash: hash }, () => [hash]);
  return 0;
}
