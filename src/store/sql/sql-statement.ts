/**
 * `idp sql -c`: a statement (or several, as psql -c sends them: one simple query, one implicit
 * transaction) sent over the PostgreSQL protocol, on PostgreSQL or on the embedded database's
 * socket alike, and the rows of the last one: as PostgreSQL prints them (psql's text), and as values.
 */
import pg from 'pg';

export interface StatementResult {
  /** The command tag's verb: SELECT, UPDATE, CREATE, ... */
  command: string;
  /** Rows returned or changed; null for a command that counts none. */
  rowCount: number | null;
  columns: string[];
  /** Each cell as PostgreSQL's text output (null for NULL): `{a,b}` for an array, `t` for true. */
  text: Array<Array<string | null>>;
  /** Each row as values (pg's types: arrays, booleans, dates, JSON); 64-bit integers and bytes stay text. */
  rows: Array<Record<string, unknown>>;
}

const KEPT_AS_TEXT = new Set([pg.types.builtins.INT8, pg.types.builtins.BYTEA]);

const valueOf = (oid: number, cell: string | null): unknown =>
  cell === null || KEPT_AS_TEXT.has(oid) ? cell : pg.types.getTypeParser(oid, 'text')(cell);

export async function runStatement(url: string, statement: string): Promise<StatementResult> {
  // Every cell as the text PostgreSQL sent: values are made from it below.
  const client = new pg.Client({ connectionString: url, types: { getTypeParser: () => (value: string) => value } });
  client.on('error', () => {});
  await client.connect();
  try {
    const answered: unknown = await client.query({ text: statement, rowMode: 'array' });
    const results = (Array.isArray(answered) ? answered : [answered]) as Array<pg.QueryArrayResult<Array<string | null>>>;
    const last = results.at(-1);
    if (!last) throw new Error('the database answered nothing');
    const fields = last.fields ?? [];
    return {
      command: last.command ?? '',
      rowCount: last.rowCount,
      columns: fields.map((f) => f.name),
      text: last.rows,
      rows: last.rows.map((row) => Object.fromEntries(fields.map((f, i) => [f.name, valueOf(f.dataTypeID, row[i] ?? null)]))),
    };
  } finally {
    await client.end().catch(() => {});
  }
}
