/**
 * The floor server (bench/floors/floor-server.ts) and the peer (bench/peer/peer-server.ts), each
 * in a process of its own with the Node.js flags of `npm start`, as the service's instances run,
 * and the same Instances shape so that the harness reads their CPU time and memory alike.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, ROOT, startFlags, waitListening, type Instances } from './servers.ts';

export type SideServer = 'floor' | 'peer';

const SCRIPTS: Record<SideServer, string> = { floor: 'bench/floors/floor-server.ts', peer: 'bench/peer/peer-server.ts' };

export async function startSideServer(kind: SideServer, logDir: string, redisUrl: string): Promise<Instances> {
  const port = await freePort();
  const logFile = join(logDir, `${kind}.log`);
  const fd = openSync(logFile, 'a');
  const extra = process.env.IDP_BENCH_SERVER_NODE_ARGS?.split(' ').filter((a) => a !== '') ?? [];
  const env = {
    PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NODE_ENV: 'production',
    FLOOR_PORT: String(port), PEER_PORT: String(port), PEER_REDIS_URL: redisUrl,
  };
  const child = spawn(process.execPath, [...startFlags(), ...extra, join(ROOT, SCRIPTS[kind])], { env, cwd: ROOT, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitListening(child, port, logFile, 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  // No PostgreSQL database: the name matches no backend (Redis still counts, for the peer its store).
  return { url: `http://127.0.0.1:${port}`, port, pids: [child.pid as number], database: `no-database-${kind}`, logFiles: [logFile], stop };
}
