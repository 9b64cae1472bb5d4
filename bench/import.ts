/**
 * `npm run bench -- --import`: `idp import FILE --format keycloak` of a generated realm export
 * (10,000 then 100,000 users, each with a pbkdf2-sha256 password credential and a profile, and
 * a client), each into an empty PostgreSQL database. The file is written as a stream and the
 * hashes are stored as given (no hashing at import), so what is measured is reading, checking
 * and writing. Reports the seconds and the command's peak RSS per size: the target is 100,000
 * users in under 60 s, with memory flat as the file grows.
 */
import { spawn } from 'node:child_process';
import { pbkdf2Sync, randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createEnvironment, sourceState } from './harness.ts';
import { ROOT } from './servers.ts';

const SIZES = [10_000, 100_000];
const TARGET_SECONDS = 60;

export interface ImportBenchReport {
  mode: 'import';
  startedAt: string;
  machine: { cores: number; node: string; loadavgBefore: number[]; loadavgAfter: number[] };
  source: ReturnType<typeof sourceState>;
  runs: Array<{ users: number; fileMiB: number; seconds: number; cpuSeconds: number; usersPerSecond: number; peakRssMiB: number }>;
  met: boolean;
}

/** One password credential, as Keycloak exports it, shared by every user (computing 100,000 would measure the generator). */
function passwordCredential(): string {
  const salt = randomBytes(16);
  const value = pbkdf2Sync('bench password', salt, 27500, 32, 'sha256');
  return JSON.stringify({
    type: 'password', userLabel: null, createdDate: 1700000000000,
    secretData: JSON.stringify({ value: value.toString('base64'), salt: salt.toString('base64'), additionalParameters: {} }),
    credentialData: JSON.stringify({ hashIterations: 27500, algorithm: 'pbkdf2-sha256', additionalParameters: {} }),
  });
}

/** Writes a realm export of `users` users, one at a time (the generator's memory stays flat too). */
async function writeRealmExport(path: string, users: number): Promise<void> {
  const out = createWriteStream(path);
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const credential = passwordCredential();
  await write(`{"id":"${randomUUID()}","realm":"bench","enabled":true,"clients":[{"clientId":"shop","name":"Shop","enabled":true,"secret":"${'s'.repeat(40)}",`);
  await write('"redirectUris":["https://shop.example/cb"],"webOrigins":["+"],"standardFlowEnabled":true,"publicClient":false,"attributes":{}}],"users":[');
  for (let i = 0; i < users; i++) {
    const user = {
      id: randomUUID(), createdTimestamp: 1700000000000, username: `user${i}`, enabled: true, totp: false, emailVerified: true,
      firstName: 'Bench', lastName: `User ${i}`, email: `user${i}@bench.example`, attributes: { locale: ['en'] },
      credentials: [JSON.parse(credential) as object], disableableCredentialTypes: [], requiredActions: [], realmRoles: ['default-roles-bench', 'buyer'], notBefore: 0, groups: [],
    };
    await write(`${i === 0 ? '' : ','}${JSON.stringify(user)}`);
  }
  await write(']}');
  out.end();
  await once(out, 'finish');
}

/**
 * Runs the import under GNU time: its duration, the CPU time it used (on a busy machine the
 * wall time is mostly waiting for a core) and its peak resident memory.
 */
async function timedImport(file: string, env: Record<string, string>): Promise<{ seconds: number; cpuSeconds: number; peakRssMiB: number; output: string }> {
  const started = process.hrtime.bigint();
  const args = ['-f', 'TIME %U %S %M', process.execPath, join(ROOT, 'bin/idp.js'), 'import', file, '--format', 'keycloak'];
  const child = spawn('/usr/bin/time', args, { env, cwd: ROOT });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2000)));
  child.stderr.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2000)));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (code !== 0) throw new Error(`idp import exited ${code}: ${output}`);
  const [, user, system, maxKiB] = /TIME ([\d.]+) ([\d.]+) (\d+)/.exec(output) ?? [];
  return { seconds, cpuSeconds: Number(user) + Number(system), peakRssMiB: Math.round(Number(maxKiB) / 1024), output: output.replace(/TIME .*/, '') };
}

export async function runImportBench(): Promise<ImportBenchReport> {
  const loadavgBefore = loadavg();
  const env = await createEnvironment();
  const dir = mkdtempSync(join(tmpdir(), 'idp-bench-import-'));
  const runs: ImportBenchReport['runs'] = [];
  try {
    for (const users of SIZES) {
      const file = join(dir, `realm-${users}.json`);
      await writeRealmExport(file, users);
      const databaseUrl = await env.createDatabase();
      const idpEnv = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DATABASE_URL: databaseUrl, IDP_SECRET: env.secret, LOG_LEVEL: 'warn' };
      const { seconds, cpuSeconds, peakRssMiB, output } = await timedImport(file, idpEnv);
      const fileMiB = Math.round(statSync(file).size / 1024 / 1024);
      console.log(`${users} users (${fileMiB} MiB): ${seconds.toFixed(1)} s (CPU ${cpuSeconds.toFixed(1)} s, load ${loadavg()[0]?.toFixed(1)}), ${Math.round(users / seconds)} users/s, peak RSS ${peakRssMiB} MiB; ${output.trim().split('\n').at(-1) ?? ''}`);
      runs.push({ users, fileMiB, seconds, cpuSeconds, usersPerSecond: Math.round(users / seconds), peakRssMiB });
      rmSync(file);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await env.cleanup();
  }
  const largest = runs.at(-1);
  const met = largest !== undefined && largest.seconds < TARGET_SECONDS;
  console.log(`target: ${SIZES.at(-1)} users in under ${TARGET_SECONDS} s: ${met ? 'met' : 'NOT met'}`);
  return {
    mode: 'import', startedAt: new Date().toISOString(),
    machine: { cores: availableParallelism(), node: process.version, loadavgBefore, loadavgAfter: loadavg() },
    source: sourceState(), runs, met,
  };
}
