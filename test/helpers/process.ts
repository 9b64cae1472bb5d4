/**
 * Drives the `idp` command from outside, as an administrator or an operator would: spawned
 * processes with their own environment, their output and exit codes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { HANG_LIMIT_MS, waitUntil } from './waits.ts';

export const ROOT = resolve(import.meta.dirname, '../..');
export const IDP_BIN = join(ROOT, 'bin/idp.js');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Suites run in parallel on one Redis, all from 127.0.0.1, and many share client ids: the rate
 * limits' counts (kept in Redis per source address and per client) would be one budget for the
 * whole run, and a suite would be refused with another suite's 429. A service on Redis gets
 * budgets out of reach, unless its suite sets its own (the suites about the limits do).
 */
export function withRunWideBudgets<T extends Record<string, string | undefined>>(env: T): T {
  // The administration API's budget is per client, and suites call it as `automation` far more
  // often in a minute than an operator would, even in process: out of reach everywhere.
  const admin = { IDP_ADMIN_API_RATE_LIMIT: '1000000' };
  if (!env.REDIS_URL) return { ...admin, ...env };
  return { IDP_AUTHORIZE_RATE_LIMIT: '1000000', IDP_TOKEN_RATE_LIMIT: '1000000', ...admin, ...env };
}

/**
 * In production the management port defaults to 9464: servers of suites running side by side
 * would all want it. Unless the test names the variable (an explicit `undefined` keeps the
 * default), a production service listens on a port the system chooses.
 */
export function withFreeManagementPort<T extends Record<string, string | undefined>>(env: T): T {
  if (env.NODE_ENV !== 'production' || 'IDP_MANAGEMENT_PORT' in env) return env;
  return { ...env, IDP_MANAGEMENT_PORT: '0' };
}

/** A clean environment: only PATH and HOME from the test process, plus what the test sets. */
export function testEnv(extra: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn' };
  for (const [k, v] of Object.entries(withFreeManagementPort(withRunWideBudgets(extra)))) if (v !== undefined) env[k] = v;
  return env;
}

/** Runs `command ARGS...` to completion, with `stdin` as its input. */
export function runProcess(command: string, args: string[], env: Record<string, string>, stdin = ''): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env, cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    // A command that exits before reading its input must not fail the run with EPIPE.
    child.stdin.on('error', () => {});
    child.stdin.end(stdin);
  });
}

/** Runs `idp ARGS...` to completion. */
export function runIdp(args: string[], env: Record<string, string | undefined>, stdin?: string): Promise<RunResult> {
  return runProcess(process.execPath, [IDP_BIN, ...args], testEnv(env), stdin);
}

/** Runs `idp seed` on `seed` written to a file, as an administrator would; expects exit 0. */
export async function seedWith(seed: object, env: Record<string, string | undefined>): Promise<void> {
  const dir = tempDir('idp-seed-');
  try {
    const file = join(dir.path, 'seed.json');
    writeFileSync(file, JSON.stringify(seed));
    const seeded = await runIdp(['seed', file], env);
    expect(seeded.code, `idp seed: ${seeded.stdout}${seeded.stderr}`).toBe(0);
  } finally {
    dir.remove();
  }
}

/** A free loopback port. */
export function freePort(): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolvePromise(port));
    });
    server.on('error', reject);
  });
}

export function tempDir(prefix = 'idp-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface RunningServer {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  stop(): Promise<number | null>;
}

/**
 * The output once `done` holds for it, or as it is when the process has exited (or at the limit
 * for a hang). A server writes its log asynchronously, so a line may arrive after the answer it
 * belongs to (or after /readyz), and later still on a busy machine.
 */
export async function outputWhen(source: { output(): string; child?: ChildProcess }, done: (output: string) => boolean): Promise<string> {
  await waitUntil('the awaited output', () => done(source.output()), { processes: source.child ? [source.child] : [] }).catch(() => undefined);
  return source.output();
}

export interface StartOptions {
  /** A port chosen beforehand (e.g. to register {IDP_BASE_URL} elsewhere first); default a free one. */
  port?: number;
  /** What must answer 200 before the server counts as started; default /readyz. */
  readyPath?: string;
}

/**
 * Starts `idp serve` on a free loopback port and waits until /readyz (or `readyPath`) answers
 * 200: however long that takes, unless the server exits first (then it fails at once, with its
 * output). `limitMs` is a safety net for a hang, no guess at how long a start takes.
 */
export async function startServer(env: Record<string, string | undefined>, limitMs = HANG_LIMIT_MS, options: StartOptions = {}): Promise<RunningServer> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [IDP_BIN, 'serve'], {
    env: testEnv({ IDP_BASE_URL: url, HOST: '127.0.0.1', PORT: String(port), ...env }),
    cwd: ROOT,
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const readyPath = options.readyPath ?? '/readyz';
  try {
    await waitUntil(`the server answers 200 at ${readyPath}`, async () => (await fetch(`${url}${readyPath}`)).status === 200, {
      processes: [child], detail: () => output, intervalMs: 100, limitMs,
    });
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    port,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      // Only a hang is cut short: a slow shutdown still reports its own exit code.
      const timer = setTimeout(() => child.kill('SIGKILL'), HANG_LIMIT_MS);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
