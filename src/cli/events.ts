/**
 * `idp events [--type T]... [--user SUB] [--client ID] [--since T] [--until T] [--limit N]`: the
 * audit log, newest first, one line per event (a table) or, with --json, one JSON object per line.
 * The filters are read by the administrative layer, as the API reads its query.
 */
import { eventDocument, eventsPage, readEventFilter } from '../admin/audit-log.ts';
import { MAX_PAGE_SIZE } from '../admin/pages.ts';
import { escapeJsonControlCharacters } from '../control-characters.ts';
import type { AuditLogEntry } from '../store/contracts/audit-log.ts';
import { parseCommand } from './args.ts';
import { UsageError, type CliContext, type ExitCode } from './context.ts';
import { namingFlags } from './flag-names.ts';
import { formatTable } from './output.ts';

const USAGE = 'idp events [--type T]... [--user SUB] [--client ID] [--since T] [--until T] [--limit N]';
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 100_000;
const FLAGS = { type: 'type', user_id: 'user', client_id: 'client', since: 'since', until: 'until' };

function limitOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  const n = /^\d{1,6}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= MAX_LIMIT)) throw new UsageError(`--limit "${text}": must be a whole number from 1 to ${MAX_LIMIT}`);
  return n;
}

/** The fields a line shows in its own columns (as the filters read them) are left out of its summary. */
const OWN_COLUMNS = new Set(['user_id', 'client_id']);

function summary(data: Record<string, unknown>): string {
  return Object.entries(data).filter(([name]) => !OWN_COLUMNS.has(name))
    .map(([name, value]) => `${name}=${typeof value === 'string' ? value : JSON.stringify(value)}`).join(' ');
}

function row(entry: AuditLogEntry): string[] {
  return [entry.occurredAt.toISOString(), entry.type, entry.userId ?? '-', entry.clientId ?? '-', summary(entry.data)];
}

export async function runEvents(args: string[], context: CliContext): Promise<ExitCode> {
  const { values } = parseCommand({
    usage: USAGE,
    options: {
      type: { type: 'string', multiple: true }, user: { type: 'string' }, client: { type: 'string' },
      since: { type: 'string' }, until: { type: 'string' }, limit: { type: 'string' },
    },
    positionals: [],
  }, args);
  const limit = limitOf(values.limit);
  const input = { type: values.type, user_id: values.user, client_id: values.client, since: values.since, until: values.until };
  const filter = await namingFlags(FLAGS, input, async () => readEventFilter(input));
  const durable = await context.openDurable();
  const entries: AuditLogEntry[] = [];
  let after: string | undefined;
  do {
    const page = await eventsPage(durable, filter, { after, limit: Math.min(MAX_PAGE_SIZE, limit - entries.length) });
    entries.push(...page.items);
    after = page.next;
  } while (after !== undefined && entries.length < limit);
  if (context.json) {
    for (const entry of entries) context.out(escapeJsonControlCharacters(JSON.stringify(eventDocument(entry))));
  } else {
    for (const line of formatTable(['TIME', 'TYPE', 'USER', 'CLIENT', 'DETAILS'], entries.map(row), 'no events')) context.out(line);
  }
  return 0;
}
