/**
 * The embedded default's data directory as a local attacker sees it: what is in it (the
 * database's files, the generated secret, the socket the command line shares) is the owner's
 * alone, a directory of someone else's is refused, a generated secret file that was emptied is
 * refused, and a client of the socket (the PostgreSQL protocol) that holds a transaction open
 * cannot stall the server.
 */
import { chmodSync, chownSync, mkdirSync, readdirSync, statSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { waitUntil } from '../helpers/waits.ts';

/** Every path under `dir` (itself included) whose mode lets the group or others in, with its mode. */
function openToOthers(dir: string): string[] {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: false }) as string[];
  return [dir, ...entries.map((e) => join(dir, e))]
    .map((path) => ({ path, mode: statSync(path).mode & 0o777 }))
    .filter(({ mode }) => (mode & 0o077) !== 0)
    .map(({ path, mode }) => `${path} ${mode.toString(8)}`);
}

/** The socket the embedded database is served on, named as PostgreSQL names the socket of port 5432. */
const SOCKET = '.s.PGSQL.5432';

/** A first start unpacks the embedded database: slow on a shared machine. */
const START_MS = 90_000;

function expectOneLine(result: { code: number | null; stderr: string }, ...parts: string[]): void {
  expect(result.code, result.stderr).toBe(2);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  for (const part of parts) expect(lines[0]).toContain(part);
}

describe('a data directory others could read', () => {
  const dir = tempDir();
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('becomes 0700, and no file the server creates in it, the socket included, is ever open to others', async () => {
    chmodSync(dir.path, 0o755);
    // Watch the socket from the moment it is bound: the chmod that once followed left a window.
    const socketModes: number[] = [];
    const watcher = watch(dir.path, (_event, name) => {
      if (name !== SOCKET) return;
      try {
        socketModes.push(statSync(join(dir.path, SOCKET)).mode & 0o777);
      } catch {
        // removed again
      }
    });
    try {
      server = await startServer({ IDP_DATA_DIR: dir.path }, START_MS);
    } finally {
      watcher.close();
    }
    expect(statSync(dir.path).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir.path, SOCKET)).isSocket()).toBe(true);
    expect(openToOthers(dir.path)).toStrictEqual([]);
    expect(socketModes.filter((mode) => (mode & 0o077) !== 0)).toStrictEqual([]);
  });

  it('keeps what a command creates in a fresh directory private as well', async () => {
    const fresh = tempDir();
    try {
      const data = join(fresh.path, 'nested', 'data');
      const result = await runIdp(['clients', 'list', '--json'], { IDP_DATA_DIR: data });
      expect(result.code, result.stderr).toBe(0);
      expect(openToOthers(data)).toStrictEqual([]);
    } finally {
      fresh.remove();
    }
  });
});

describe.runIf(process.getuid?.() === 0)('a data directory that is not the user\'s own', () => {
  it('stops a command and the server with one line naming IDP_DATA_DIR when another user owns it', async () => {
    const dir = tempDir();
    try {
      const data = join(dir.path, 'data');
      mkdirSync(data, { mode: 0o700 });
      chownSync(data, 65534, 65534);
      expectOneLine(await runIdp(['clients', 'list'], { IDP_DATA_DIR: data }), 'IDP_DATA_DIR', data, 'another user');
      expectOneLine(await runIdp(['serve'], { IDP_DATA_DIR: data, HOST: '127.0.0.1', PORT: '0' }), 'IDP_DATA_DIR', data);
    } finally {
      dir.remove();
    }
  });

  it('refuses one that others may write to, and leaves its mode alone', async () => {
    const dir = tempDir();
    try {
      const data = join(dir.path, 'shared');
      mkdirSync(data);
      chmodSync(data, 0o1777);
      expectOneLine(await runIdp(['clients', 'list'], { IDP_DATA_DIR: data }), 'IDP_DATA_DIR', data, 'written by other users');
      expect(statSync(data).mode & 0o7777).toBe(0o1777);
    } finally {
      dir.remove();
    }
  });
});

describe('the generated secret file', () => {
  it.each([
    ['empty', '', 'is empty'],
    ['cut short', 'c2hvcnQ\n', 'decodes to 5'],
  ])('%s stops a sealing command and the server with one line naming the file', async (_name, text, problem) => {
    const dir = tempDir();
    try {
      const file = join(dir.path, 'secret');
      writeFileSync(file, text, { mode: 0o600 });
      expectOneLine(await runIdp(['keys', 'list'], { IDP_DATA_DIR: dir.path }), file, problem);
      expectOneLine(await runIdp(['serve'], { IDP_DATA_DIR: dir.path, HOST: '127.0.0.1', PORT: '0' }), file, problem);
    } finally {
      dir.remove();
    }
  });
});

/** A PostgreSQL client of the embedded database's socket, as psql would be one. */
async function socketClient(dir: string): Promise<pg.Client & { ended: Promise<Error | undefined> }> {
  const client = new pg.Client({ host: dir, user: 'postgres', database: 'postgres' });
  // The reason the server gave for ending the connection, if any.
  let reason: Error | undefined;
  client.on('error', (error) => (reason ??= error));
  const ended = new Promise<Error | undefined>((resolve) => client.once('end', () => resolve(reason)));
  await client.connect();
  return Object.assign(client, { ended });
}

describe('a socket client that holds a transaction and sends nothing more', () => {
  const dir = tempDir();
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ IDP_DATA_DIR: dir.path }, START_MS);
  }, START_MS + 10_000);
  afterAll(async () => {
    await server?.stop();
    dir.remove();
  });

  it('is disconnected (FATAL 25P03) and rolled back within the idle limit, and the server answers again', async () => {
    const holder = await socketClient(dir.path);
    await holder.query('BEGIN');
    await holder.query('CREATE TABLE held_open (x int)');
    const held = Date.now();
    // The server's own statements wait meanwhile (the session is the client's), until the limit ends it.
    const reason = await holder.ended;
    expect(Date.now() - held).toBeLessThan(15_000);
    expect(reason?.message).toMatch(/idle-in-transaction timeout/);
    const answer = await fetch(`${server.url}/readyz`);
    expect({ status: answer.status, body: await answer.json() }).toMatchObject({ status: 200, body: { database: 'ok' } });
    const reader = await socketClient(dir.path);
    try {
      expect((await reader.query("SELECT to_regclass('held_open') AS t")).rows).toStrictEqual([{ t: null }]);
    } finally {
      await reader.end();
    }
  });

  it('has its session settings undone once it lets go, so the server keeps its own', async () => {
    const client = await socketClient(dir.path);
    try {
      await client.query("SET search_path = 'nowhere'");
      await client.query('UNLISTEN *');
    } finally {
      await client.end();
    }
    const ready = await fetch(`${server.url}/readyz`);
    expect({ status: ready.status, body: await ready.json() }).toMatchObject({ status: 200, body: { database: 'ok' } });
    // The server still hears the triggers: a client disabled over the socket is refused at once.
    const check = await socketClient(dir.path);
    try {
      await check.query("UPDATE clients SET enabled = false WHERE client_id = 'demo'");
    } finally {
      await check.end();
    }
    await waitUntil('the disabled demo client is refused', async () => {
      const res = await fetch(`${server.url}/connect/authorize?client_id=demo&response_type=code&redirect_uri=${encodeURIComponent('http://localhost:8080/callback')}`, { redirect: 'manual' });
      await res.arrayBuffer();
      return res.headers.get('location')?.includes('error=unauthorized_client');
    }, { limitMs: 1000 });
  });
});
