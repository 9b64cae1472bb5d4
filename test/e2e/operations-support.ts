/**
 * Shared by the operations e2e suites (instances, outages, hardening, logs and metrics): a Redis
 * the test runs itself (so it can stop, freeze and restart it, and nothing else shares its keys),
 * a load balancer in front of several instances, raw HTTP (a Host header of the test's choosing,
 * bytes fetch refuses to send), and a seeded deployment of `idp serve` processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import net from 'node:net';
import { expect } from 'vitest';
import { freePort, runIdp, seedWith, startServer, type RunResult, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, runSql, type TestDatabase } from '../helpers/services.ts';
import { sleep } from '../helpers/relying-party.ts';
import { HANG_LIMIT_MS, waitUntil } from '../helpers/waits.ts';

export const IDP_SECRET = 'f0'.repeat(32);
export const WEB_SECRET = 'ops-web-secret-0123456789abcdefghijklmnop';
export const SERVICE_SECRET = 'ops-service-secret-0123456789abcdefghijk';
export const WEB_REDIRECT = 'https://rp.test/cb';
export const WEB_LOGOUT = 'https://rp.test/bye';
/** RFC 6238 test secret of the README's seed example (80 bits). */
export const TOTP_SECRET = 'JBSWY3DPEHPK3PXP';

export const ALICE = { username: 'alice', password: 'correct horse battery staple' };
export const MIA = { username: 'mia', password: 'her very own long password 7', totp_secret: TOTP_SECRET };

export { sleep };

/** Waits, when needed, until `seconds` remain in the token rate limit's one-minute window. */
export async function roomInRateWindow(seconds: number): Promise<void> {
  const intoMinute = (Date.now() / 1000) % 60;
  if (60 - intoMinute < seconds) await sleep((60 - intoMinute) * 1000 + 300);
}

// ---------------------------------------------------------------------------------------------
// A Redis of the test's own

export interface OwnRedis {
  port: number;
  url: string;
  /** Stops the server (SIGKILL: as a crash, or a host that went away) and waits for its exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence) and waits until it answers PING. */
  start(): Promise<void>;
  /** SIGSTOP: connections stay open, nothing answers (a hung server, a partition). */
  freeze(): void;
  thaw(): void;
}

/** Sends one inline command and resolves with the first reply line, or rejects. */
function redisCommand(port: number, command: string, timeoutMs = 500): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(timeoutMs);
    let reply = '';
    socket.once('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (d: Buffer) => {
      reply += d.toString();
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.split('\r\n')[0] ?? '');
      }
    });
    socket.once('timeout', () => (socket.destroy(), reject(new Error('redis: no answer'))));
    socket.once('error', reject);
  });
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const c = child;
    exited = new Promise((resolve) => c.once('exit', () => resolve()));
    await waitUntil('redis-server answers PING', async () => (await redisCommand(port, 'PING')) === '+PONG', { processes: [c] });
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child?.exitCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
      await exited;
    },
    start,
    freeze: () => void child?.kill('SIGSTOP'),
    thaw: () => void child?.kill('SIGCONT'),
  };
}

// ---------------------------------------------------------------------------------------------
// A load balancer: the public address of several instances

/**
 * An HTTP reverse proxy on the public base URL's port. Every request goes to the instance chosen
 * with `use()`, with its Host header unchanged (as a load balancer keeps it), and, as a load
 * balancer does, with X-Forwarded-For naming the client: a fresh address per request unless the
 * request names one itself (the instances trust it with IDP_TRUST_PROXY=true). Each request
 * stands for another client, so per-address budgets stay out of the way unless a test asks.
 */
export class Balancer {
  readonly port: number;
  readonly url: string;
  private target: number | undefined;
  private readonly server: http.Server;
  private readonly prefix = `10.${1 + (randomBytes(1)[0] ?? 0) % 250}`;
  private count = 0;
  /** How many requests went to each instance port. */
  readonly served = new Map<number, number>();

  private constructor(port: number, server: http.Server) {
    this.port = port;
    this.url = `http://127.0.0.1:${port}`;
    this.server = server;
    server.on('request', (req, res) => this.forward(req, res));
  }

  static async start(): Promise<Balancer> {
    const port = await freePort();
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return new Balancer(port, server);
  }

  /** Sends the following requests to `server`. */
  use(server: RunningServer): void {
    this.target = server.port;
  }

  freshAddress(): string {
    this.count += 1;
    return `${this.prefix}.${Math.floor(this.count / 250) % 256}.${(this.count % 250) + 1}`;
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    const port = this.target;
    if (port === undefined) {
      res.writeHead(502).end('no instance chosen');
      return;
    }
    this.served.set(port, (this.served.get(port) ?? 0) + 1);
    const headers = { ...req.headers, 'x-forwarded-for': req.headers['x-forwarded-for'] ?? this.freshAddress() };
    const upstream = http.request({ host: '127.0.0.1', port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------------------------------------
// A TCP proxy in front of PostgreSQL: a network the test can cut or freeze

export class TcpProxy {
  readonly port: number;
  private readonly target: { host: string; port: number };
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private frozen = false;

  private constructor(port: number, target: { host: string; port: number }) {
    this.port = port;
    this.target = target;
  }

  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(await freePort(), target);
    await proxy.listen();
    return proxy;
  }

  private listen(): Promise<void> {
    const server = net.createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => client.destroy());
      if (this.frozen) return;
      const upstream = net.connect(this.target);
      this.sockets.add(upstream);
      upstream.on('close', () => (this.sockets.delete(upstream), client.destroy()));
      upstream.on('error', () => upstream.destroy());
      client.on('close', () => upstream.destroy());
      client.on('data', (d: Buffer) => void (this.frozen || upstream.write(d)));
      upstream.on('data', (d: Buffer) => void (this.frozen || client.write(d)));
    });
    this.server = server;
    return new Promise((resolve) => server.listen(this.port, '127.0.0.1', resolve));
  }

  /** The network goes away: open connections are reset and new ones refused. */
  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.resetAndDestroy();
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  /** Connections stay open and new ones are accepted, but no byte goes through (a partition). */
  freeze(): void {
    this.frozen = true;
  }

  /** Back to normal: what was frozen is dropped (as a partition loses it), new connections work. */
  async restore(): Promise<void> {
    if (this.frozen) {
      this.frozen = false;
      for (const socket of this.sockets) socket.resetAndDestroy();
    }
    if (!this.server) await this.listen();
  }

  async close(): Promise<void> {
    await this.cut();
  }
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** When the response had been read completely (Date.now()). */
  at: number;
}

export interface RawRequest {
  method?: string;
  path: string;
  /** The Host header; fetch always sends the address it connects to, this sends what it is given. */
  host?: string;
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  /** Gives up (rejects) after this long: a test's bound on the product; otherwise only a hang ends the wait. */
  timeoutMs?: number;
}

/**
 * What a request that got no response counts as, for suites that tally every outcome: status 0
 * and the error, after `note` (what the suite expected instead) when given.
 */
export function unanswered(error: unknown, note?: string): RawResponse {
  return { status: 0, headers: {}, text: note === undefined ? String(error) : `${note}: ${String(error)}`, at: Date.now() };
}

/**
 * One request over node:http to 127.0.0.1:`port` on a connection of its own. Resolves with the
 * complete response whatever its status; rejects when the connection fails or is cut before the
 * response is complete (a "socket hang up"), or on the timeout.
 */
export function rawRequest(port: number, options: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { host: options.host ?? `127.0.0.1:${port}`, ...options.headers };
    if (options.body !== undefined && headers['content-length'] === undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const req = http.request({ host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.path, headers, agent: false, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), at: Date.now() }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('response aborted')));
    });
    const timeoutMs = options.timeoutMs ?? HANG_LIMIT_MS;
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no complete response in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Writes `bytes` as they are on a fresh TCP connection and returns everything the server sends
 * until it closes the connection (or `timeoutMs` passes): for requests no HTTP client would send.
 */
export function rawExchange(port: number, bytes: Buffer | string, timeoutMs = HANG_LIMIT_MS): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    socket.once('connect', () => socket.write(bytes));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      if (chunks.length > 0) resolve(Buffer.concat(chunks).toString('latin1'));
      else reject(error);
    });
  });
}

/** Status, headers and body of the first response in raw bytes from the server. */
export function parseRawResponse(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end < 0 ? '' : raw.slice(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    let rest = body;
    body = '';
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = Number.parseInt(rest.slice(0, lineEnd), 16);
      if (lineEnd < 0 || !Number.isFinite(size) || size === 0) break;
      body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
    }
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: Buffer.from(body, 'latin1').toString('utf8') };
}

// ---------------------------------------------------------------------------------------------
// A seeded deployment

export interface SeedClient {
  client_id: string;
  client_secret?: string;
  display_name?: string;
  grant_types: string[];
  scopes: string[];
  redirect_uris?: string[];
  post_logout_redirect_uris?: string[];
  require_consent?: boolean;
}

export function webClient(clientId = 'web'): SeedClient {
  return {
    client_id: clientId, client_secret: WEB_SECRET, display_name: `Web shop ${clientId}`,
    grant_types: ['authorization_code', 'refresh_token'],
    scopes: ['openid', 'profile', 'email', 'offline_access'],
    redirect_uris: [WEB_REDIRECT], post_logout_redirect_uris: [WEB_LOGOUT], require_consent: false,
  };
}

export function serviceClient(clientId = 'service'): SeedClient {
  return {
    client_id: clientId, client_secret: SERVICE_SECRET, display_name: `Order service ${clientId}`,
    grant_types: ['client_credentials'], scopes: ['orders.read'],
  };
}

export interface SeedUser {
  username: string;
  password: string;
  totp_secret?: string;
}

export function seedOf(clients: SeedClient[], users: SeedUser[]) {
  return {
    api_scopes: ['orders.read'],
    clients,
    users: users.map((u) => ({ ...u, name: `${u.username} Tester`, given_name: u.username, email: `${u.username}@example.com`, email_verified: true })),
  };
}

export interface Deployment {
  db: TestDatabase;
  servers: RunningServer[];
  /** What every `idp` command and instance shares: DATABASE_URL and IDP_SECRET. */
  env: Record<string, string>;
  idp(args: string[]): Promise<RunResult>;
  sql<T extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  stop(): Promise<void>;
}

export interface DeploymentOptions {
  seed: object;
  /** Environment of every instance (REDIS_URL, IDP_BASE_URL, IDP_TOKEN_RATE_LIMIT, ...). */
  env?: Record<string, string>;
  instances?: number;
  /** Runs before the first instance starts, on the seeded database (e.g. to prepare keys). */
  prepare?(deployment: Pick<Deployment, 'idp' | 'sql'>): Promise<void>;
}

/** A fresh database, seeded by `idp seed` (which migrates it), and `instances` servers on it. */
export async function startDeployment(options: DeploymentOptions): Promise<Deployment> {
  const db = await createMigratedTestDatabase();
  const env = { DATABASE_URL: db.url, IDP_SECRET };
  const idp = (args: string[]) => runIdp(args, env);
  const sql = <T extends Record<string, unknown>>(text: string, values: unknown[] = []) => runSql<T>(db.url, text, values);
  const servers: RunningServer[] = [];
  try {
    await seedWith(options.seed, env);
    await options.prepare?.({ idp, sql });
    for (let i = 0; i < (options.instances ?? 1); i++) servers.push(await startServer({ ...env, LOG_LEVEL: 'info', ...options.env }));
  } catch (error) {
    await Promise.all(servers.map((s) => s.stop()));
    await db.drop();
    throw error;
  }
  return {
    db,
    servers,
    env,
    idp,
    sql,
    async stop() {
      await Promise.all(servers.map((s) => s.stop()));
      await db.drop();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Assertions every suite uses

const INTERNALS = [
  /^\s*at\s+\S+.*(:\d+:\d+|\(native\))/m, // a stack frame
  /\bat (async )?[\w.<>]+ \(/, // a stack frame
  /\/work\/|node_modules|\/src\/[\w/-]+\.ts|file:\/\//, // a file path
  /\b(TypeError|ReferenceError|SyntaxError|RangeError)\b/, // an error class
];

/** What in a response body gives away internals (a stack frame, a path, an error class); '' when nothing. */
export function internalsIn(text: string): string {
  const hit = INTERNALS.find((pattern) => pattern.test(text));
  return hit ? `internals in the body (${hit.source})` : '';
}

export function expectNoInternals(text: string, what: string): void {
  expect(internalsIn(text), `${what}: ${text.slice(0, 300)}`).toBe('');
}

/** A token endpoint style error, as node:http received it: JSON {error, error_description}, no-store. */
export function expectJsonError(res: RawResponse, status: number | number[], code: string, what: string): void {
  const statuses = Array.isArray(status) ? status : [status];
  expect(statuses, `${what}: ${res.status} ${res.text.slice(0, 300)}`).toContain(res.status);
  expect(res.headers['content-type'], `${what}: content type`).toMatch(/^application\/json/);
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(res.text) as Record<string, unknown>;
  } catch {
    // asserted below
  }
  expect(body.error, `${what}: ${res.text.slice(0, 300)}`).toBe(code);
  expect(typeof body.error_description, `${what}: error_description`).toBe('string');
  expect(res.headers['cache-control'], `${what}: cache-control`).toMatch(/no-store/);
}
