/**
 * `idp import FILE [--format keycloak|auth0|idp] [--dry-run]`: users (and clients) from another
 * provider's export, through src/admin/import/. The report names each record created, updated
 * or refused (with the field), as its batch is done, then the counts; exit 1 when any record
 * was refused (the others are imported all the same).
 */
import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { importEntries, type ImportCounts, type ImportResult } from '../admin/import/apply.ts';
import { auth0Entries } from '../admin/import/auth0.ts';
import type { ImportEntry } from '../admin/import/entries.ts';
import { idpEntries } from '../admin/import/idp.ts';
import { JsonFileError } from '../admin/import/json-stream.ts';
import { keycloakEntries } from '../admin/import/keycloak.ts';
import { recordedChange } from '../admin/recorded-change.ts';
import { parseCommand } from './args.ts';
import { changeDeps, cliActor } from './audit.ts';
import { RefusedError, UsageError, type CliContext, type ExitCode } from './context.ts';
import { report } from './output.ts';

const USAGE = 'idp import FILE [--format keycloak|auth0|idp] [--dry-run]';

const FORMATS: Record<string, (input: Readable) => AsyncIterable<ImportEntry>> = {
  keycloak: keycloakEntries,
  auth0: auth0Entries,
  idp: idpEntries,
};

/** Where a problem is: a JSON pointer into the file (`/users/3/email`), or a line and a pointer into its record. */
const place = (at: string, field: string) => (at.startsWith('/') ? `${at}${field}` : `${at}${field === '' ? '' : ` ${field}`}`);

/** `user alice: created`, `client web: redirect_uris`, `user bob (/users/2): refused: /users/2/email: must be an email address`. */
function resultLines(result: ImportResult): string[] {
  const name = `${result.type.replace('_', ' ')} ${result.record}`;
  if (result.result === 'refused') return result.problems.map((p) => `${name}: refused: ${place(result.at, p.field)}: ${p.message}`);
  const notes = result.notes.map((note) => `${name}: note: ${place(result.at, note)}`);
  if (result.result === 'skipped') return result.reason === 'unchanged' ? notes : [`${name}: skipped (${result.reason})`, ...notes];
  return [`${name}: ${result.result === 'created' ? 'created' : `updated ${result.fields.join(', ')}`}`, ...notes];
}

function countsLine(counts: ImportCounts, dryRun: boolean): string {
  const one = (c: ImportCounts['users']) => `${c.created} created, ${c.updated} updated, ${c.skipped} skipped, ${c.refused} refused`;
  const scopes = counts.api_scopes.created + counts.api_scopes.skipped + counts.api_scopes.refused > 0 ? `; api scopes: ${one(counts.api_scopes)}` : '';
  return `${dryRun ? 'dry run, nothing written: ' : ''}users: ${one(counts.users)}; clients: ${one(counts.clients)}${scopes}`;
}

export async function runImport(args: string[], context: CliContext): Promise<ExitCode> {
  const { values, positionals } = parseCommand({ usage: USAGE, options: { format: { type: 'string', default: 'idp' }, 'dry-run': { type: 'boolean', default: false } }, positionals: ['FILE'] }, args);
  const path = positionals[0] as string;
  const read = FORMATS[values.format];
  if (!read || !Object.hasOwn(FORMATS, values.format)) throw new UsageError(`unknown format "${values.format}": keycloak, auth0 or idp (usage: ${USAGE})`);
  try {
    await access(path);
  } catch (error) {
    throw new RefusedError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  const dryRun = values['dry-run'];
  // Lines as each batch is done (a person sees progress, memory stays flat); one document under --json.
  const results: ImportResult[] = [];
  const onResult = (result: ImportResult) => (context.json ? results.push(result) : report(context, undefined, () => resultLines(result)));
  let counts: ImportCounts;
  try {
    counts = await importEntries({ durable: await context.openDurable(), secret: context.secret, clock: context.clock }, read(createReadStream(path)), { dryRun, onResult });
  } catch (error) {
    if (error instanceof JsonFileError) throw new RefusedError(`${path}: ${error.message}; the records before it were imported`);
    throw error;
  }
  const changed = results.length > 0 || counts.users.created + counts.users.updated + counts.clients.created + counts.clients.updated + counts.api_scopes.created > 0;
  report(context, { dry_run: dryRun, ...counts, records: results.filter((r) => r.result !== 'skipped' || r.reason !== 'unchanged') }, () => [countsLine(counts, dryRun)]);
  // The file is written in batches, each its own transaction: its one event follows the last, in a transaction of its own.
  if (!dryRun && changed) {
    await recordedChange(await changeDeps(context), cliActor(context), `import file ${path}`, async () => ({ result: undefined, change: { action: 'import', resource: 'import_file', resource_id: path, fields: [] } }));
  }
  return counts.users.refused + counts.clients.refused + counts.api_scopes.refused > 0 ? 1 : 0;
}
