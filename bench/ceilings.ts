/**
 * The ceilings, in a process of their own: what this machine does without HTTP, storage or
 * logging. RS256 signatures and verifications per second with jose (an RSA-2048 key, an access
 * token's payload, 64 operations in flight) and argon2id verifications per second with the
 * service's own parameters (ARGON2_PARAMS). Prints one JSON document on stdout.
 *
 *   node bench/ceilings.ts [--seconds 3] [--warmup 1]
 */
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { hash, verify } from '@node-rs/argon2';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { ARGON2_PARAMS } from '../src/sources/passwords.ts';

export interface Ceiling {
  /** Operations per second with IN_FLIGHT operations in flight. */
  perSecond: number;
  operations: number;
  seconds: number;
  /** CPU time of this process per operation (all threads), milliseconds. */
  cpuMsPerOp: number;
}

export interface Ceilings {
  inFlight: number;
  cores: number;
  threadpoolSize: number;
  signRs256: Ceiling;
  verifyRs256: Ceiling;
  argon2Verify: Ceiling;
}

const IN_FLIGHT = 64;

/**
 * Runs `op` with `inFlight` calls outstanding for `seconds`. Only operations finished within
 * the window count (the tail still in flight at its end is awaited, not counted), so a slow
 * operation such as argon2 does not stretch the window.
 */
export async function throughput(op: () => Promise<unknown>, seconds: number, inFlight = IN_FLIGHT): Promise<Ceiling> {
  let operations = 0;
  let cpuAtDeadline: NodeJS.CpuUsage | undefined;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  const timer = setTimeout(() => (cpuAtDeadline = process.cpuUsage(cpuBefore)), seconds * 1000);
  const worker = async () => {
    while (performance.now() < deadline) {
      await op();
      if (performance.now() <= deadline) operations += 1;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  clearTimeout(timer);
  const cpu = cpuAtDeadline ?? process.cpuUsage(cpuBefore);
  return { perSecond: operations / seconds, operations, seconds, cpuMsPerOp: (cpu.user + cpu.system) / 1000 / Math.max(1, operations) };
}

/** A payload shaped like the service's user access tokens (src/grants/user-tokens.ts). */
function accessTokenPayload(): JWTPayload {
  const iat = Math.floor(Date.now() / 1000);
  return {
    iss: 'http://127.0.0.1:3000/', sub: randomUUID(), iat, exp: iat + 3600, jti: randomUUID(),
    client_id: 'bench-web', scope: 'openid profile email offline_access', svc_uid: randomUUID(),
    name: 'Bench User', given_name: 'Bench', family_name: 'User', email: 'bench@example.com', email_verified: true,
  };
}

export async function measureCeilings(seconds: number, warmup: number): Promise<Ceilings> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: 2048 });
  const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
  const sign = () => new SignJWT(accessTokenPayload()).setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' }).sign(privateKey);
  const token = await sign();
  const verifyToken = () => jwtVerify(token, publicKey, { algorithms: ['RS256'], issuer: 'http://127.0.0.1:3000/', typ: 'at+jwt' });
  const password = 'correct horse battery staple';
  const stored = await hash(password, ARGON2_PARAMS);
  const verifyPassword = async () => {
    if (!(await verify(stored, password))) throw new Error('argon2 verification failed');
  };

  const measure = async (op: () => Promise<unknown>) => {
    if (warmup > 0) await throughput(op, warmup);
    return throughput(op, seconds);
  };
  return {
    inFlight: IN_FLIGHT,
    cores: cpus().length,
    threadpoolSize: Number(process.env.UV_THREADPOOL_SIZE ?? 4),
    signRs256: await measure(sign),
    verifyRs256: await measure(verifyToken),
    argon2Verify: await measure(verifyPassword),
  };
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, warmup: { type: 'string', default: '1' } } });
  const result = await measureCeilings(Number(values.seconds), Number(values.warmup));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
