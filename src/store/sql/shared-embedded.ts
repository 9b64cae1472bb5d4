/**
 * The embedded database shared with the command line while a development server holds it.
 * PGlite serves one process; the server therefore listens on a Unix socket in its data
 * directory (mode 0600, in a directory of mode 0700) and runs, on its own PGlite, the statements
 * an `idp` command sends: one JSON line per request and per answer. A change made this way fires
 * the same triggers and notifications as any other, so it reaches the running server at once.
 *
 * A command's transaction holds the database for itself (PGlite's exclusive transaction): the
 * server's own statements wait until it ends, and a command that dies mid-way rolls it back.
 * One that sends nothing for IDLE_TRANSACTION_MS while its transaction is open is disconnected
 * and rolled back, so that a client holding a `BEGIN` cannot stall the server.
 */
import { chmodSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import net from 'node:net';
import { createInterface } from 'node:readline';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import {
  Kysely, PGliteAdapter, PostgresIntrospector, PostgresQueryCompiler,
  type CompiledQuery, type DatabaseConnection, type Dialect, type Driver, type QueryResult,
} from 'kysely';
import type { Connection } from './connection.ts';
import type { Database } from './tables.ts';

interface Request {
  id: number;
  op: 'query' | 'begin' | 'commit' | 'rollback';
  sql?: string;
  params?: unknown[];
}

interface Answer {
  id: number;
  rows?: unknown[];
  affectedRows?: number;
  error?: Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------
// Values as JSON: dates, bytes and big integers keep their type across the socket.

function encode(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { $date: raw.toISOString() };
    if (raw instanceof Uint8Array) return { $bytes: Buffer.from(raw).toString('base64') };
    if (typeof raw === 'bigint') return { $bigint: raw.toString() };
    return v;
  });
}

function decode(text: string): unknown {
  return JSON.parse(text, (_key, v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    const tagged = v as Record<string, unknown>;
    if (typeof tagged.$date === 'string') return new Date(tagged.$date);
    if (typeof tagged.$bytes === 'string') return Buffer.from(tagged.$bytes, 'base64');
    if (typeof tagged.$bigint === 'string') return BigInt(tagged.$bigint);
    return v;
  });
}

/** What a PostgreSQL error says that callers read (SQLSTATE, constraint, column), never more. */
function errorFields(error: unknown): Record<string, unknown> {
  const e = error as Record<string, unknown>;
  const fields: Record<string, unknown> = { message: error instanceof Error ? error.message : String(error) };
  for (const name of ['code', 'constraint', 'column', 'table', 'detail', 'severity']) if (typeof e?.[name] === 'string') fields[name] = e[name];
  return fields;
}

// ---------------------------------------------------------------------------------------------
// The server's side.

/** A transaction opened for one command: its statements, and how it ends. */
interface OpenTransaction {
  query(sql: string, params: unknown[]): ReturnType<Transaction['query']>;
  end(commit: boolean): Promise<void>;
}

async function beginTransaction(pglite: PGlite): Promise<OpenTransaction> {
  let decide!: (commit: boolean) => void;
  const decided = new Promise<boolean>((resolve) => (decide = resolve));
  let began!: (tx: Transaction) => void;
  const started = new Promise<Transaction>((resolve) => (began = resolve));
  const ROLLBACK = new Error('rolled back by the command');
  const closed = pglite.transaction(async (tx) => {
    began(tx);
    // PGlite rolls back when the callback throws, and commits when it returns.
    if (!(await decided)) throw ROLLBACK;
  });
  const tx = await Promise.race([started, closed.then(() => Promise.reject(new Error('the transaction ended before it began')))]);
  return {
    query: (sql, params) => tx.query(sql, params, { rowMode: 'object' }),
    async end(commit) {
      decide(commit);
      await closed.catch((error: unknown) => {
        if (error !== ROLLBACK) throw error;
      });
    },
  };
}

/** How long a command's open transaction may wait for its next statement (the `idp` commands send theirs back to back). */
export const IDLE_TRANSACTION_MS = 10_000;

/** Answers one command's requests in order; a dropped connection rolls back what it left open. */
function serveCommand(pglite: PGlite, socket: net.Socket): void {
  let transaction: OpenTransaction | undefined;
  let queue = Promise.resolve();
  let waiting = 0;
  let idle: NodeJS.Timeout | undefined;
  // Only while nothing is queued: a long statement is work, not idleness.
  const watchIdle = () => {
    clearTimeout(idle);
    if (transaction && waiting === 0) idle = setTimeout(() => socket.destroy(), IDLE_TRANSACTION_MS);
  };
  const answer = (message: Answer) => {
    if (!socket.destroyed) socket.write(`${encode(message)}\n`);
  };
  const handle = async (line: string) => {
    let request: Request;
    try {
      request = decode(line) as Request;
    } catch {
      socket.destroy();
      return;
    }
    try {
      if (request.op === 'begin') {
        if (transaction) throw new Error('a transaction is already open');
        transaction = await beginTransaction(pglite);
        answer({ id: request.id });
      } else if (request.op === 'commit' || request.op === 'rollback') {
        const ending = transaction;
        transaction = undefined;
        await ending?.end(request.op === 'commit');
        answer({ id: request.id });
      } else {
        const params = request.params ?? [];
        const result = transaction
          ? await transaction.query(request.sql ?? '', params)
          : await pglite.query(request.sql ?? '', params, { rowMode: 'object' });
        answer({ id: request.id, rows: result.rows, ...(result.affectedRows !== undefined ? { affectedRows: result.affectedRows } : {}) });
      }
    } catch (error) {
      answer({ id: request.id, error: errorFields(error) });
    }
  };
  createInterface({ input: socket, crlfDelay: Infinity }).on('line', (line) => {
    waiting++;
    clearTimeout(idle);
    queue = queue.then(() => handle(line)).then(() => {
      waiting--;
      watchIdle();
    });
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    clearTimeout(idle);
    queue = queue.then(async () => {
      await transaction?.end(false).catch(() => {});
      transaction = undefined;
    });
  });
}

/** Shares `pglite` on `socketPath` until the returned function is called. */
export async function shareEmbedded(pglite: PGlite, socketPath: string): Promise<() => Promise<void>> {
  // Whoever connects gets the superuser's SQL: the socket is bound only where no one else can
  // enter (the chmod after binding would leave a window), never in a directory others may open.
  const directory = dirname(socketPath);
  if ((statSync(directory).mode & 0o077) !== 0) throw new Error(`${directory} is open to other users: the database is not shared from there`);
  // A socket left by a server that was killed: nobody listens on it any more.
  rmSync(socketPath, { force: true });
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serveCommand(pglite, socket);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  chmodSync(socketPath, 0o600);
  return async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(socketPath, { force: true });
  };
}

// ---------------------------------------------------------------------------------------------
// The command line's side: a Kysely driver whose one connection is the socket.

class SocketConnection implements DatabaseConnection {
  readonly #socket: net.Socket;
  readonly #pending = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();
  #next = 1;

  constructor(socket: net.Socket) {
    this.#socket = socket;
    createInterface({ input: socket, crlfDelay: Infinity }).on('line', (line) => {
      const answer = decode(line) as Answer;
      this.#pending.get(answer.id)?.resolve(answer);
      this.#pending.delete(answer.id);
    });
    socket.on('close', () => {
      for (const { reject } of this.#pending.values()) reject(new Error('the development server closed the shared database'));
      this.#pending.clear();
    });
  }

  async send(op: Request['op'], sql?: string, params?: readonly unknown[]): Promise<Answer> {
    const id = this.#next++;
    const answer = await new Promise<Answer>((resolve, reject) => {
      if (this.#socket.destroyed) {
        reject(new Error('the development server closed the shared database'));
        return;
      }
      this.#pending.set(id, { resolve, reject });
      this.#socket.write(`${encode({ id, op, sql, params })}\n`);
    });
    if (answer.error) throw Object.assign(new Error(String(answer.error.message)), answer.error);
    return answer;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const answer = await this.send('query', query.sql, query.parameters);
    return {
      rows: (answer.rows ?? []) as R[],
      ...(answer.affectedRows !== undefined ? { numAffectedRows: BigInt(answer.affectedRows) } : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported over the shared embedded database');
  }

  close(): void {
    this.#socket.end();
  }
}

class SocketDriver implements Driver {
  readonly #socket: net.Socket;
  #connection: SocketConnection | undefined;
  /** One connection: a transaction must have it alone, so acquiring waits for the last release. */
  #held: Promise<void> = Promise.resolve();
  #release: (() => void) | undefined;

  constructor(socket: net.Socket) {
    this.#socket = socket;
  }

  async init(): Promise<void> {
    this.#connection = new SocketConnection(this.#socket);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const previous = this.#held;
    let release!: () => void;
    this.#held = new Promise<void>((resolve) => (release = resolve));
    await previous;
    this.#release = release;
    return this.#connection as SocketConnection;
  }

  async releaseConnection(): Promise<void> {
    const release = this.#release;
    this.#release = undefined;
    release?.();
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as SocketConnection).send('begin');
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as SocketConnection).send('commit');
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as SocketConnection).send('rollback');
  }

  async destroy(): Promise<void> {
    this.#connection?.close();
  }
}

/** Connects to a development server's shared database; undefined when no server listens there. */
export async function connectShared(socketPath: string): Promise<Connection | undefined> {
  const socket = await new Promise<net.Socket | undefined>((resolve) => {
    const s = net.createConnection(socketPath);
    s.once('connect', () => resolve(s));
    s.once('error', () => resolve(undefined));
  });
  if (!socket) return undefined;
  socket.on('error', () => {});
  const dialect: Dialect = {
    createAdapter: () => new PGliteAdapter(),
    createDriver: () => new SocketDriver(socket),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  };
  const db = new Kysely<Database>({ dialect });
  return {
    kind: 'embedded',
    db,
    // The command line needs no change feed: the server, which has one, sees its changes.
    listen: async () => ({ state: () => 'listening', stop: async () => {} }),
    close: () => db.destroy(),
  };
}
