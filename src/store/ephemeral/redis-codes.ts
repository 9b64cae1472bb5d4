/**
 * The code steps on Redis: one script each, so that redeeming a code and recording what it
 * issued are each one round trip and atomic across instances. The keys of one code share its
 * hash as a cluster hash tag (`code:{h}`, `code:{h}:used`, `code-issued:{h}`, `code-reused:{h}`),
 * so that a script may touch them all on Redis Cluster; they are the keys releases before the
 * code store used, so that instances of both can share codes while they roll.
 */
import type { Cluster, Redis } from 'ioredis';
import type { CodeRecord, IssuedFromCode } from '../records.ts';
import type { Namespace } from '../types.ts';
import { CODE_TTL_SECONDS, type CodeSteps } from './codes.ts';
import { NAMESPACES } from './namespaces.ts';
import { defineScript } from './redis-scripts.ts';

// KEYS: the record, its use marker, what the first use issued, a replay's mark. ARGV: TTL (ms).
// Returns nil (unknown or expired), {1, record} (first use), {2} or {2, issued} (a replay).
const REDEEM = `
local record = redis.call('GET', KEYS[1])
if not record then return nil end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[1]) then return {1, record} end
local issued = redis.call('GET', KEYS[3])
if issued then return {2, issued} end
redis.call('SET', KEYS[4], '1', 'PX', ARGV[1])
return {2}
`;

// KEYS: what the first use issued, a replay's mark. ARGV: what it issued (JSON), TTL (ms).
// Returns 1 when a replay left its mark before.
const RECORD_ISSUED = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return redis.call('EXISTS', KEYS[2])
`;

const TTL_MS = String(CODE_TTL_SECONDS * 1000);

/**
 * `redis` is the connection, `connection()` what to send on (its writes coalesced); `k` names
 * a key as the store does.
 */
export function redisCodeSteps(redis: Redis | Cluster, connection: () => Redis | Cluster, k: (ns: Namespace, key: string) => string): CodeSteps {
  const redeem = defineScript(redis, connection, 'idpRedeemCode', 4, REDEEM);
  const recordIssued = defineScript(redis, connection, 'idpRecordCodeIssued', 2, RECORD_ISSUED);
  return {
    async redeem(key) {
      const keys = [k(NAMESPACES.code, key), `${k(NAMESPACES.code, key)}:used`, k(NAMESPACES.codeIssued, key), k(NAMESPACES.codeReplayed, key)];
      const result = (await redeem(keys, [TTL_MS])) as [number, string?] | null;
      if (!result) return { outcome: 'unknown' };
      const [step, json] = result;
      if (step === 1) return { outcome: 'redeemed', record: JSON.parse(json ?? 'null') as CodeRecord };
      return { outcome: 'replayed', issued: json === undefined ? undefined : (JSON.parse(json) as IssuedFromCode) };
    },
    async recordIssued(key, issued) {
      const keys = [k(NAMESPACES.codeIssued, key), k(NAMESPACES.codeReplayed, key)];
      return Number(await recordIssued(keys, [JSON.stringify(issued), TTL_MS])) === 1;
    },
  };
}
