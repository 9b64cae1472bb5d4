/**
 * The service as the bench runs it: `idp serve` processes in the production shape, each logging
 * at info to a file of its own, all listening on one port (SO_REUSEPORT, bench/reuse-port.ts);
 * and what the kernel says about them (/proc/<pid>/stat CPU time, /proc/<pid>/status memory).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, statSync } from 'node:fs';
import net from 'node:net';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
const IDP_BIN = join(ROOT, 'bin/idp.js');
const REUSE_PORT = join(ROOT, 'bench/reuse-port.ts');

/** The Node.js flags of `npm start` (package.json), so that the instances run as production does. */
export function startFlags(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = scripts.start.split(/\s+/);
  return words.slice(1, words.indexOf('bin/idp.js')).filter((w) => w.startsWith('--'));
}
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every Linux the bench targets). */
const CLOCK_TICKS = 100;

export interface Instances {
  url: string;
  port: number;
  pids: number[];
  /** The PostgreSQL database they use (its backends' CPU time is the storage's share). */
  database: string;
  logFiles: string[];
  stop(): Promise<void>;
}

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => done(port));
    });
    server.on('error', fail);
  });
}

/** The environment of production: NODE_ENV=production over http on loopback, PostgreSQL, Redis. */
export function productionEnv(port: number, extra: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    NODE_ENV: 'production',
    IDP_ALLOW_HTTP: '1',
    IDP_BASE_URL: `http://127.0.0.1:${port}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'info',
    IDP_TOKEN_RATE_LIMIT: '10000000',
    // The password sign-in scenario signs one user in from every connection at once, all from
    // 127.0.0.1; each password being checked holds one of the account's (at that address and over
    // every address) and one of the address's attempts until it is found right. When a phase ends, the passwords still queued for argon2
    // hold theirs while the next phase's 64 connections arrive: above 100 at once from one address.
    IDP_LOGIN_MAX_FAILURES: '1000',
    IDP_LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
    IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000',
    IDP_AUTHORIZE_RATE_LIMIT: '10000000',
    IDP_ADMIN_API_RATE_LIMIT: '10000000',
    // Production's management port is 9464: the instances (and a bench running beside another) take any free one.
    IDP_MANAGEMENT_PORT: '0',
    // For experiments only: IDP_BENCH_SERVER_ENV="MALLOC_ARENA_MAX=2 UV_THREADPOOL_SIZE=8".
    ...Object.fromEntries((process.env.IDP_BENCH_SERVER_ENV ?? '').split(' ').filter((kv) => kv.includes('=')).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
    ...extra,
  };
}

/** Whether the process holds a TCP socket listening on `port` (/proc/net/tcp LISTEN rows, its fds). */
function listensOn(pid: number, port: number): boolean {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const row of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; st 0A is LISTEN; column 9 is the inode.
      if (cols[1]?.endsWith(`:${hexPort}`) && cols[3] === '0A' && cols[9]) inodes.add(cols[9]);
    }
  }
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.startsWith('socket:[') && inodes.has(target.slice(8, -1))) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** Waits until this very process listens on the port (others share it: HTTP cannot tell them apart). */
export async function waitListening(child: ChildProcess, port: number, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${child.spawnargs.at(-1) ?? ''} exited with ${child.exitCode}: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
    if (child.pid !== undefined && listensOn(child.pid, port)) return;
    if (Date.now() > deadline) throw new Error(`${child.spawnargs.at(-1) ?? ''} did not listen within ${timeoutMs} ms: ${readFileSync(logFile, 'utf8').slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts `count` instances on one port and waits until every one of them listens. */
export async function startInstances(count: number, env: Record<string, string>, port: number, logDir: string, label: string): Promise<Instances> {
  const children: ChildProcess[] = [];
  const logFiles: string[] = [];
  const exits: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const logFile = join(logDir, `${label}-instance-${i + 1}.log`);
    const fd = openSync(logFile, 'a');
    const extra = process.env.IDP_BENCH_SERVER_NODE_ARGS?.split(' ').filter((a) => a !== '') ?? [];
    const child = spawn(process.execPath, [...startFlags(), ...extra, '--import', REUSE_PORT, IDP_BIN, 'serve'], { env, cwd: ROOT, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    children.push(child);
    logFiles.push(logFile);
    exits.push(new Promise((r) => child.once('exit', () => r())));
  }
  const stop = async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => children.forEach((c) => c.exitCode === null && c.kill('SIGKILL')), 10_000);
    await Promise.all(exits);
    clearTimeout(timer);
  };
  try {
    await Promise.all(children.map((child, i) => waitListening(child, port, logFiles[i] as string, 60_000)));
  } catch (error) {
    await stop();
    throw error;
  }
  const database = new URL(env.DATABASE_URL ?? 'postgres://-/').pathname.slice(1);
  return { url: `http://127.0.0.1:${port}`, port, pids: children.map((c) => c.pid as number), database, logFiles, stop };
}

/** utime + stime of a process (all its threads), in milliseconds. */
export function cpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/**
 * utime + stime of a process's main thread alone (JavaScript: Fastify, the routes, pg, ioredis;
 * not libuv's pool, where RSA and argon2 run, nor V8's helpers), in milliseconds.
 */
export function mainThreadCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuMs(path: string): number {
  const stat = readFileSync(path, 'utf8');
  // The command name may hold spaces: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/**
 * CPU time (ms) of the storage serving `database`, by pid: the PostgreSQL backends whose process
 * title names it, and the Redis server (shared with whatever else uses it on this machine).
 */
export function storageCpuMs(database: string): Map<number, { ms: number; redis: boolean }> {
  const found = new Map<number, { ms: number; redis: boolean }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      const redis = comm === 'redis-server';
      const ours = redis || (comm === 'postgres' && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(` ${database} `));
      if (ours) found.set(Number(entry), { ms: cpuMs(Number(entry)), redis });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** CPU time spent between two storageCpuMs() readings (a backend born meanwhile counts whole). */
export function storageCpuDelta(before: ReturnType<typeof storageCpuMs>, after: ReturnType<typeof storageCpuMs>): { postgres: number; redis: number } {
  const sum = { postgres: 0, redis: 0 };
  for (const [pid, { ms, redis }] of after) sum[redis ? 'redis' : 'postgres'] += ms - (before.get(pid)?.ms ?? 0);
  return sum;
}

/** A field of /proc/<pid>/status in MB (VmRSS, VmHWM). */
export function memoryMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : 0;
}

/** Busy and total jiffies of the whole machine (/proc/stat), to tell how saturated it was. */
export function machineJiffies(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/** Samples VmRSS of the pids every `intervalMs`; stop() returns the peak of each pid in MB. */
export function sampleRss(pids: number[], intervalMs = 100): { stop(): number[] } {
  const peaks = pids.map(() => 0);
  const sample = () => pids.forEach((pid, i) => {
    try {
      peaks[i] = Math.max(peaks[i] ?? 0, memoryMb(pid, 'VmRSS'));
    } catch {
      // the process is gone
    }
  });
  sample();
  const timer = setInterval(sample, intervalMs);
  return { stop: () => (clearInterval(timer), sample(), peaks) };
}

/** Current size of each log file: where the next scenario's lines start. */
export function logOffsets(files: string[]): number[] {
  return files.map((f) => statSync(f).size);
}

/** Request lines written to each log file between two offsets (which instance served what). */
export function requestLinesBetween(files: string[], from: number[], to: number[]): number[] {
  return files.map((file, i) => {
    const start = from[i] ?? 0;
    const end = to[i] ?? start;
    if (end <= start) return 0;
    const fd = openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(end - start);
      readSyncFully(fd, buffer, start);
      return buffer.toString('utf8').split('"msg":"request"').length - 1;
    } finally {
      closeSync(fd);
    }
  });
}

function readSyncFully(fd: number, buffer: Buffer, position: number): void {
  let read = 0;
  while (read < buffer.length) {
    const n = readSync(fd, buffer, read, buffer.length - read, position + read);
    if (n === 0) break;
    read += n;
  }
}
