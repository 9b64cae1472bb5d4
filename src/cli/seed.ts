/**
 * `idp seed FILE.json`: reads the file and has src/admin/seed.ts apply it (in one transaction;
 * idempotent), then names per record the fields it changed. A refused file is named with every
 * wrong field, one line each.
 */
import { readFile } from 'node:fs/promises';
import { AdminError, formatPath } from '../admin/errors.ts';
import { applySeed, parseSeed, type SeedRecord, type SeedSummary } from '../admin/seed.ts';
import { parseCommand } from './args.ts';
import { cliActor } from './audit.ts';
import { RefusedError, type CliContext, type ExitCode } from './context.ts';
import { report } from './output.ts';

async function readSeedFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new RefusedError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new RefusedError(`${path} is not valid JSON: ${(error as Error).message}; nothing was written`);
  }
}

function summaryLine({ clients, users, api_scopes: scopes }: SeedSummary): string {
  const counts = (c: SeedSummary['clients']) => `${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged`;
  return `clients: ${counts(clients)}; users: ${counts(users)}; api scopes: ${scopes.created} created, ${scopes.unchanged} unchanged`;
}

/** `client demo: redirect_uris`, `user alice: created`: what the seed did to one record. */
function recordLine(record: SeedRecord): string {
  return `${record.type} ${record.id}: ${record.result === 'created' ? 'created' : record.fields.join(', ')}`;
}

export async function runSeed(args: string[], context: CliContext): Promise<ExitCode> {
  const { positionals } = parseCommand({ usage: 'idp seed FILE.json', options: {}, positionals: ['FILE.json'] }, args);
  const path = positionals[0] as string;
  const raw = await readSeedFile(path);
  let summary: SeedSummary;
  try {
    const seed = parseSeed(raw);
    summary = await applySeed({ durable: await context.openDurable(), secret: context.secret, clock: context.clock }, seed, cliActor(context), path);
  } catch (error) {
    // A refused file: every wrong field on a line of its own, then the file named.
    if (error instanceof AdminError && error.problems.length > 0) {
      throw new RefusedError(`${path} refused: ${error.message}`, error.problems.map((p) => `${formatPath(p.path)}: ${p.message}`));
    }
    throw error;
  }
  const { clients, users, api_scopes, records } = summary;
  report(context, { clients, users, api_scopes, records }, () => [...records.map(recordLine), summaryLine(summary)]);
  return 0;
}
