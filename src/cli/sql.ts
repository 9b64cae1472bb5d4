/**
 * `idp sql [-c STATEMENT]`: SQL on the configured database, the embedded one included (the
 * README's "Editing clients with SQL"). Without -c, psql's session; with -c, the statement's
 * rows (or its command and count). Either way over the PostgreSQL protocol: DATABASE_URL, or the
 * embedded database's socket in IDP_DATA_DIR, which the running server serves, or this command
 * while it lasts when none runs.
 */
import { embeddedSocketPath } from '../data-dir.ts';
import { embeddedSocketUrl } from '../store/sql/connection.ts';
import { runStatement, type StatementResult } from '../store/sql/sql-statement.ts';
import { parseCommand } from './args.ts';
import { RefusedError, type CliContext, type ExitCode } from './context.ts';
import { formatTable, report } from './output.ts';

const USAGE = 'idp sql [-c STATEMENT]';

/** The database's URL, and what stops serving the embedded one if this command serves it. */
async function connect(context: CliContext): Promise<{ url: string; stop?: (() => Promise<void>) | undefined }> {
  const { databaseUrl, dataDir } = context.config;
  if (databaseUrl) return { url: databaseUrl };
  // The running server's database (it serves the socket), or this process's own, served here.
  const durable = await context.openDurable();
  const socketPath = embeddedSocketPath(dataDir);
  return { url: embeddedSocketUrl(socketPath), stop: await durable.share?.(socketPath) };
}

/** psql's arguments: the URL without its password, which goes in PGPASSWORD (never on a command line others can list). */
function psqlInvocation(url: string): { args: string[]; env: Record<string, string> } {
  const credentials = /^([a-z][a-z0-9+.-]*:\/\/[^:@/]*):([^@/]*)@/i.exec(url);
  if (!credentials) return { args: [url], env: {} };
  const [whole = '', user = '', password = ''] = credentials;
  return { args: [`${user}@${url.slice(whole.length)}`], env: { PGPASSWORD: decodeURIComponent(password) } };
}

function resultLines(result: StatementResult): string[] {
  if (result.columns.length === 0) return [[result.command, result.rowCount ?? ''].join(' ').trim()];
  const cells = result.text.map((row) => row.map((cell) => cell ?? ''));
  const count = `(${result.text.length} ${result.text.length === 1 ? 'row' : 'rows'})`;
  return [...(cells.length > 0 ? formatTable(result.columns, cells, '') : [result.columns.join('  ')]), count];
}

async function runOne(url: string, statement: string, context: CliContext): Promise<ExitCode> {
  let result: StatementResult;
  try {
    result = await runStatement(url, statement);
  } catch (error) {
    const { message, detail } = error as { message?: string; detail?: string };
    throw new RefusedError(`${message ?? String(error)}${detail ? ` (${detail})` : ''}`);
  }
  report(context, { command: result.command, row_count: result.rowCount, rows: result.rows }, () => resultLines(result));
  return 0;
}

export async function runSql(args: string[], context: CliContext): Promise<ExitCode> {
  const { values } = parseCommand({ usage: USAGE, options: { command: { type: 'string', short: 'c' } }, positionals: [] }, args);
  const { url, stop } = await connect(context);
  try {
    if (values.command !== undefined) return await runOne(url, values.command, context);
    const { args: psqlArgs, env } = psqlInvocation(url);
    const code = await context.runProgram('psql', psqlArgs, env);
    if (code === undefined) throw new RefusedError('psql was not found: install the PostgreSQL client (the postgresql-client package), or run one statement with idp sql -c');
    return code === 0 ? 0 : 1;
  } finally {
    await stop?.();
  }
}
