/**
 * The distributed parts a deployment scales out on, run for real on free loopback ports from
 * temporary directories: a Redis Cluster (three masters, `redis-server --cluster-enabled yes` and
 * `redis-cli --cluster create`), a Sentinel group (a master, a replica and three sentinels) and
 * Debian's PgBouncer in transaction pooling in front of the test PostgreSQL. Used by the e2e
 * suites and by the soak (bench/soak.ts), so nothing here depends on the test runner.
 * When a binary is missing the suites say so in one line and are skipped, unless
 * IDP_TEST_REQUIRE_SERVICES=1, where it fails the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { freePort, tempDir } from './process.ts';
import { waitUntil } from './waits.ts';

const REDIS_SERVER = '/usr/bin/redis-server';
const REDIS_CLI = '/usr/bin/redis-cli';
const PGBOUNCER = '/usr/sbin/pgbouncer';

function availableOrSay(name: string, paths: string[], install: string): boolean {
  const missing = paths.filter((path) => !existsSync(path));
  if (missing.length === 0) return true;
  if (process.env.IDP_TEST_REQUIRE_SERVICES === '1') throw new Error(`${name} is required (IDP_TEST_REQUIRE_SERVICES=1) but ${missing.join(', ')} is missing: apt-get install ${install}`);
  console.warn(`${missing.join(', ')} not found: the ${name} suites are skipped (apt-get install ${install})`);
  return false;
}

export const redisServersAvailable = availableOrSay('Redis Cluster and Sentinel', [REDIS_SERVER, REDIS_CLI], 'redis-server redis-tools');
export const pgbouncerAvailable = availableOrSay('PgBouncer', [PGBOUNCER], 'pgbouncer');


/** Sends one command (RESP array) and resolves with the raw reply once `done` says it is complete. */
export function redisCall(port: number, args: string[], timeoutMs = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.setTimeout(timeoutMs);
    let reply = '';
    socket.once('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    socket.on('data', (d: Buffer) => {
      reply += d.toString();
      // Enough for what the helpers ask: a simple line, or a bulk string read whole.
      const bulk = /^\$(\d+)\r\n/.exec(reply);
      if ((bulk && reply.length >= bulk[0].length + Number(bulk[1]) + 2) || (!reply.startsWith('$') && !reply.startsWith('*') && reply.includes('\r\n')) || (reply.startsWith('*') && reply.endsWith('\r\n') && reply.split('\r\n').length > 4)) {
        socket.destroy();
        resolve(reply);
      }
    });
    socket.once('timeout', () => (socket.destroy(), reject(new Error(`redis ${port}: no answer to ${args[0]}`))));
    socket.once('error', reject);
  });
}

/** Waits for `check` however long it takes, unless one of `watched` exits first (waits.ts). */
async function until(what: string, check: () => Promise<boolean>, watched: Array<Process | undefined> = []): Promise<void> {
  await waitUntil(what, check, { processes: watched.flatMap((p) => (p ? [p.child] : [])), detail: () => watched.map((p) => p?.output() ?? '').join('\n') });
}

interface Process {
  child: ChildProcess;
  exited: Promise<void>;
  output(): string;
}

function launch(command: string, args: string[], options: { cwd?: string } = {}): Process {
  const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr?.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, exited, output: () => output };
}

function running(process: Process | undefined): process is Process {
  return process !== undefined && process.child.exitCode === null && process.child.signalCode === null;
}

async function kill(process: Process | undefined, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (!running(process)) return;
  process.child.kill(signal);
  await process.exited;
}

function redisArgs(port: number, dir: string, extra: string[] = []): string[] {
  return ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no', ...extra];
}

async function pong(port: number): Promise<boolean> {
  return (await redisCall(port, ['PING'], 500)).startsWith('+PONG');
}

// ---------------------------------------------------------------------------------------------
// Redis Cluster

export interface RedisClusterServers {
  ports: number[];
  /** redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3, as REDIS_URL documents it. */
  url: string;
  /** How many keys each master holds. */
  keysPerMaster(): Promise<number[]>;
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3): Promise<RedisClusterServers> {
  const dir = tempDir('idp-cluster-');
  const ports = await Promise.all(Array.from({ length: masters }, () => freePort()));
  const servers = ports.map((port) => launch(REDIS_SERVER, redisArgs(port, dir.path, [
    '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '2000',
  ])));
  const stop = async () => {
    await Promise.all(servers.map((s) => kill(s)));
    dir.remove();
  };
  try {
    await Promise.all(ports.map((port) => until(`redis ${port} answers PING`, () => pong(port), servers)));
    const created = launch(REDIS_CLI, ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    await created.exited;
    if (created.child.exitCode !== 0) throw new Error(`redis-cli --cluster create failed: ${created.output()}`);
    await until('the cluster state is ok on every node', async () =>
      (await Promise.all(ports.map((p) => redisCall(p, ['CLUSTER', 'INFO'])))).every((info) => info.includes('cluster_state:ok')), servers);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ports,
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    async keysPerMaster() {
      return Promise.all(ports.map(async (p) => Number(/:(\d+)/.exec(await redisCall(p, ['DBSIZE']))?.[1] ?? 0)));
    },
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// Redis Sentinel

export interface RedisSentinelServers {
  masterName: string;
  /** redis+sentinel://127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3/<master>, as REDIS_URL documents it. */
  url: string;
  /** The port of the server the sentinels call master now. */
  currentMaster(): Promise<number>;
  /**
   * SIGKILLs the current master and waits until the sentinels have promoted the replica.
   * `ms`: from the kill until a new master was named; `rejoined`: the killed server started
   * again, as a replica of the new master, and in sync (watched from the restart on; a caller
   * that never awaits it leaves no unhandled rejection).
   */
  failover(): Promise<{ ms: number; rejoined: Promise<void> }>;
  stop(): Promise<void>;
}

export async function startRedisSentinel(masterName = 'idpmaster'): Promise<RedisSentinelServers> {
  const dir = tempDir('idp-sentinel-');
  const [first, second, ...sentinelPorts] = await Promise.all(Array.from({ length: 5 }, () => freePort())) as [number, number, number, number, number];
  const data = new Map<number, Process>();
  const startData = (port: number, replicaOf?: number) => {
    data.set(port, launch(REDIS_SERVER, redisArgs(port, dir.path, [
      '--dbfilename', `dump-${port}.rdb`, ...(replicaOf ? ['--replicaof', '127.0.0.1', String(replicaOf)] : []),
      // A replica that (re)joins is served at once, not after Redis's default 5 s wait for others.
      '--repl-diskless-sync-delay', '0',
    ])));
  };
  startData(first);
  startData(second, first);
  const sentinels: Process[] = [];
  const launchSentinels = () => sentinels.push(...sentinelPorts.map((port) => {
    const file = join(dir.path, `sentinel-${port}.conf`);
    writeFileSync(file, [
      `port ${port}`, 'bind 127.0.0.1', 'protected-mode no', `dir ${dir.path}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${first} 2`,
      `sentinel down-after-milliseconds ${masterName} 1000`,
      `sentinel failover-timeout ${masterName} 5000`,
      `sentinel parallel-syncs ${masterName} 1`,
    ].join('\n'));
    return launch(REDIS_SERVER, [file, '--sentinel']);
  }));
  const stop = async () => {
    await Promise.all([...sentinels, ...data.values()].map((s) => kill(s)));
    dir.remove();
  };
  const currentMaster = async () => {
    const reply = await redisCall(sentinelPorts[0] ?? 0, ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName]);
    return Number(reply.split('\r\n')[4]);
  };
  const replicaInSync = async (port: number) => (await redisCall(port, ['INFO', 'replication'])).includes('master_link_status:up');
  try {
    await until('master and replica answer PING', async () => (await pong(first)) && (await pong(second)), [...data.values()]);
    await until('the replica is in sync', () => replicaInSync(second), [...data.values()]);
    // Started once the replica is in sync, the sentinels see it in their first look at the master.
    launchSentinels();
    await until('every sentinel knows the replica and the other sentinels', async () => {
      const replies = await Promise.all(sentinelPorts.map((p) => redisCall(p, ['INFO', 'sentinel'])));
      return replies.every((info) => new RegExp(`name=${masterName},status=ok,address=127.0.0.1:${first},slaves=1,sentinels=3`).test(info));
    }, [...data.values(), ...sentinels]);
  } catch (error) {
    const log = [...data.values(), ...sentinels].map((p) => p.output()).join('\n');
    await stop();
    throw new Error(`${(error as Error).message}\n${log}`, { cause: error });
  }
  return {
    masterName,
    url: `redis+sentinel://${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${masterName}`,
    currentMaster,
    async failover() {
      const old = await currentMaster();
      const replica = old === first ? second : first;
      await until('the replica is in sync before the kill', () => replicaInSync(replica), [data.get(replica)]);
      const started = Date.now();
      await kill(data.get(old));
      await until('the sentinels name a new master', async () => (await currentMaster()) === replica, [data.get(replica), ...sentinels]);
      const ms = Date.now() - started;
      startData(old, replica);
      const rejoined = until('the old master is back as a replica', async () => {
        // Should it not stay up (its port taken by a loopback connection meanwhile, say), it starts again.
        if (!running(data.get(old))) startData(old, replica);
        return replicaInSync(old);
      }, [data.get(replica)]).catch(async (error: unknown) => {
        const report = async (port: number) => `${port}: ${await redisCall(port, ['INFO', 'replication']).catch(String)}\n${data.get(port)?.output() ?? ''}`;
        throw new Error(`${(error as Error).message}\n${await report(old)}\n${await report(replica)}`, { cause: error });
      });
      // Callers await it after other steps; should one of those fail first, that failure is the
      // one to report, not this promise's rejection as unhandled. Awaiting it still rejects.
      rejoined.catch(() => undefined);
      return { ms, rejoined };
    },
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// PgBouncer

export interface PgBouncer {
  port: number;
  /** The same database as `databaseUrl`, reached through PgBouncer. */
  urlFor(databaseUrl: string): string;
  stop(): Promise<void>;
}

/**
 * Debian's PgBouncer (1.18: no named prepared statements) in front of `postgresUrl`'s server,
 * in transaction pooling, every database passed through. It refuses to run as root: when root
 * runs the tests it drops to the `postgres` user.
 */
export async function startPgBouncer(postgresUrl: string, poolMode: 'transaction' | 'session' = 'transaction'): Promise<PgBouncer> {
  const dir = tempDir('idp-pgbouncer-');
  chmodSync(dir.path, 0o777);
  const port = await freePort();
  const server = new URL(postgresUrl);
  const file = join(dir.path, 'pgbouncer.ini');
  writeFileSync(file, [
    '[databases]',
    // auth_type any logs in to the server as the user named here, whatever the client says.
    `* = host=${server.hostname} port=${server.port || '5432'} user=${decodeURIComponent(server.username) || 'postgres'}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = any',
    `pool_mode = ${poolMode}`,
    'max_client_conn = 500',
    'default_pool_size = 20',
    'ignore_startup_parameters = extra_float_digits,options',
    `logfile = ${join(dir.path, 'pgbouncer.log')}`,
    `pidfile = ${join(dir.path, 'pgbouncer.pid')}`,
  ].join('\n'));
  chmodSync(file, 0o644);
  const asRoot = process.getuid?.() === 0;
  const bouncer = launch(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), file], { cwd: dir.path });
  const stop = async () => {
    await kill(bouncer, 'SIGINT');
    dir.remove();
  };
  try {
    await until('pgbouncer listens', () => new Promise((resolve) => {
      if (!running(bouncer)) throw new Error('pgbouncer exited');
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    }), [bouncer]);
  } catch (error) {
    const log = existsSync(join(dir.path, 'pgbouncer.log')) ? readFileSync(join(dir.path, 'pgbouncer.log'), 'utf8') : '';
    await stop();
    throw new Error(`${(error as Error).message}: ${bouncer.output()} ${log}`, { cause: error });
  }
  return {
    port,
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.host = `127.0.0.1:${port}`;
      return url.href;
    },
    stop,
  };
}
