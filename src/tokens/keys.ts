/**
 * Signing keys: RSA-2048 for RS256. A key is `next` (published, not yet signing), `current`
 * (the one signer), `previous` (published so tokens it signed still verify) or `retired`
 * (gone from the JWKS). Private keys are sealed at rest with a key derived from IDP_SECRET.
 * Every instance keeps the key set in memory and reloads it on a `keys` change event.
 */
import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { Clock } from '../clock.ts';
import type { SigningKeyRecord } from '../store/records.ts';
import type { SigningKeyRepository, SigningKeyTransaction } from '../store/types.ts';
import { isEmptyPlan, planRotation, tokensStillValid, type RotationPolicy, type TokensStillValid } from './key-rotation.ts';
import { asKeyring, openWithKeyring, seal, type Keyring } from './secret-box.ts';
import { signingKeySealingContext } from './sealing-contexts.ts';

export type { RotationPolicy, TokensStillValid } from './key-rotation.ts';

/** Keeps every token a key signed verifiable until it expires: retire such a key only when `force` says so. */
export interface RetireGuard {
  maxTokenLifetimeSeconds: number;
  force: boolean;
}

/** One key of the published key set (RFC 7517 §4 and RFC 7518 §6.3.1: kid, use, kty, alg, e, n and nothing else: no private member). */
export interface PublicJwk {
  kid: string;
  use: 'sig';
  kty: 'RSA';
  alg: 'RS256';
  e: string;
  n: string;
}

/**
 * How long relying parties may cache the published key set (its `Cache-Control: max-age`):
 * a key that signs at once may be unknown to them for that long, unless they refetch the key
 * set on an unknown kid.
 */
export const JWKS_MAX_AGE_SECONDS = 300;

export interface KeySet {
  keys: PublicJwk[];
}

/** Keys are node:crypto key objects: the hot path signs and verifies with node:crypto (see jwt.ts). */
export interface Signer {
  kid: string;
  key: KeyObject;
}

export interface KeyManagerDeps {
  keys: SigningKeyRepository;
  /** Key-encryption keys, derived from IDP_SECRET (and IDP_SECRET_PREVIOUS) for the purpose 'signing-keys'. */
  kek: Buffer | Keyring;
  clock: Clock;
}

/**
 * `refused`: tokens it signed may still be valid (and no `force`); `forced`: retired although
 * they were, so they stopped verifying at once.
 */
export type RetireResult =
  | 'retired' | 'not_found' | 'is_current' | 'already_retired'
  | (TokensStillValid & { kind: 'refused' | 'forced' });

/** What one maintenance pass did: keys published, promoted and retired (by kid). */
export interface MaintenanceReport {
  published: string[];
  promoted: string[];
  retired: string[];
}

/**
 * Writes the record of a key change (its audit events) on the key lock's transaction, before it
 * commits: the change and its record commit together (tokens/ knows no events; the caller does).
 */
export type RecordKeyChange = (tx: Pick<SigningKeyTransaction, 'outbox'>, changed: MaintenanceReport) => Promise<void>;

const noRecord: RecordKeyChange = async () => {};

export interface KeyManager {
  /** Creates the first signing key unless one exists; safe when several instances start at once. */
  ensureSigningKey(): Promise<void>;
  /** Adds a key and makes it the signer; the former signer stays published as `previous`. */
  rotate(record?: RecordKeyChange): Promise<SigningKeyRecord>;
  /** Stops publishing a key that no longer signs; with a guard, only once its tokens have expired. */
  retire(kid: string, guard?: RetireGuard, record?: RecordKeyChange): Promise<RetireResult>;
  list(): Promise<SigningKeyRecord[]>;
  /** The published key set (all but retired keys). */
  jwks(): Promise<KeySet>;
  /** The current signer. */
  signer(): Promise<Signer>;
  /** A public key by kid, for verifying tokens this service issued; undefined when unknown or retired. */
  verificationKey(kid: string): Promise<KeyObject | undefined>;
  /**
   * One pass of the automatic rotation: publish a successor ahead of time, promote it when
   * due, retire demoted keys once every token they signed has expired. Only the instance holding
   * the lock acts; the others see the change through the store.
   */
  maintain(policy: RotationPolicy, record?: RecordKeyChange): Promise<MaintenanceReport>;
  /** Drops the in-memory copy; the next use reloads it from the store. */
  invalidate(): void;
  /**
   * Seals again under the current secret every private key a previous secret sealed; returns
   * how many. Throws, changing nothing, when a key opens under none of the secrets.
   */
  reseal(): Promise<number>;
  /** How many private keys only a previous secret opens (0 once resealed); throws as reseal does. */
  sealedUnderPrevious(): Promise<number>;
}

interface LoadedKeys {
  jwks: KeySet;
  signer: Signer | undefined;
  verifiers: Map<string, KeyObject>;
}

const STATE_ORDER = { current: 0, next: 1, previous: 2, retired: 3 } as const;

export function createKeyManager(deps: KeyManagerDeps): KeyManager {
  const kek = asKeyring(deps.kek);
  let loaded: Promise<LoadedKeys> | undefined;

  const load = (): Promise<LoadedKeys> => {
    loaded ??= loadKeys(deps.keys, kek).catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };

  return {
    async ensureSigningKey() {
      const existing = await deps.keys.list();
      if (existing.some((k) => k.state === 'current')) return;
      // Generated outside the lock (it takes a while); discarded if another instance won.
      const candidate = await newKeyRecord(deps, kek, 'current');
      await deps.keys.withLock(async (tx) => {
        if ((await tx.list()).some((k) => k.state === 'current')) return;
        await tx.insert(candidate);
      });
      loaded = undefined;
    },
    async rotate(record = noRecord) {
      const fresh = await newKeyRecord(deps, kek, 'current');
      await deps.keys.withLock(async (tx) => {
        const now = new Date(deps.clock());
        for (const key of await tx.list()) {
          if (key.state === 'current') await tx.setState(key.kid, 'previous', now);
        }
        await tx.insert(fresh);
        await record(tx, { published: [], promoted: [fresh.kid], retired: [] });
      });
      loaded = undefined;
      return fresh;
    },
    async retire(kid, guard, record = noRecord) {
      const result = await deps.keys.withLock(async (tx): Promise<RetireResult> => {
        const keys = await tx.list();
        const key = keys.find((k) => k.kid === kid);
        if (!key) return 'not_found';
        if (key.state === 'current') return 'is_current';
        if (key.state === 'retired') return 'already_retired';
        // Decided under the lock, so a concurrent promotion cannot slip in between.
        const live = guard && tokensStillValid(key, keys, guard.maxTokenLifetimeSeconds, deps.clock());
        if (live && !guard.force) return { kind: 'refused', ...live };
        await tx.setState(kid, 'retired', new Date(deps.clock()));
        await record(tx, { published: [], promoted: [], retired: [kid] });
        return live ? { kind: 'forced', ...live } : 'retired';
      });
      loaded = undefined;
      return result;
    },
    list: () => deps.keys.list(),
    jwks: async () => (await load()).jwks,
    async signer() {
      const keys = await load();
      if (keys.signer) return keys.signer;
      loaded = undefined;
      throw new Error('no current signing key');
    },
    async verificationKey(kid) {
      return (await load()).verifiers.get(kid);
    },
    async maintain(policy, record = noRecord) {
      const report: MaintenanceReport = { published: [], promoted: [], retired: [] };
      if (isEmptyPlan(planRotation(await deps.keys.list(), policy, deps.clock()))) return report;
      // Made outside the lock (it takes a while); used only if still due under the lock.
      const candidate = await newKeyRecord(deps, kek, 'next');
      await deps.keys.withLock(async (tx) => {
        const now = deps.clock();
        const plan = planRotation(await tx.list(), policy, now);
        if (plan.publish) {
          await tx.insert(candidate);
          report.published.push(candidate.kid);
        }
        if (plan.promote) {
          await tx.setState(plan.promote.from, 'previous', new Date(now));
          await tx.setState(plan.promote.to, 'current', new Date(now));
          report.promoted.push(plan.promote.to);
        }
        for (const kid of plan.retire) {
          await tx.setState(kid, 'retired', new Date(now));
          report.retired.push(kid);
        }
        await record(tx, report);
      });
      loaded = undefined;
      return report;
    },
    invalidate() {
      loaded = undefined;
    },
    async reseal() {
      const count = await deps.keys.withLock(async (tx) => {
        const stale = underPrevious(await tx.list(), kek);
        for (const { record, jwk } of stale) await tx.reseal(record.kid, seal(kek.current, JSON.stringify(jwk), signingKeySealingContext(record.kid)));
        return stale.length;
      });
      loaded = undefined;
      return count;
    },
    async sealedUnderPrevious() {
      return underPrevious(await deps.keys.list(), kek).length;
    },
  };
}

/**
 * The keys only a previous secret opens. A retired key that no secret opens is left out: it
 * is never used again. Any other key that none opens is an error (the wrong secrets).
 */
function underPrevious(records: SigningKeyRecord[], kek: Keyring): Array<{ record: SigningKeyRecord; jwk: JsonWebKey }> {
  const stale: Array<{ record: SigningKeyRecord; jwk: JsonWebKey }> = [];
  for (const record of records) {
    let opened: { jwk: JsonWebKey; current: boolean };
    try {
      opened = openPrivateJwk(kek, record);
    } catch (error) {
      if (record.state === 'retired') continue;
      throw new Error(`signing key ${record.kid} opens under none of the secrets`, { cause: error });
    }
    if (!opened.current) stale.push({ record, jwk: opened.jwk });
  }
  return stale;
}

async function newKeyRecord(deps: KeyManagerDeps, kek: Keyring, state: 'current' | 'next'): Promise<SigningKeyRecord> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  const now = new Date(deps.clock());
  return {
    kid,
    alg: 'RS256',
    state,
    publicJwk: { kty: publicJwk.kty, n: publicJwk.n, e: publicJwk.e },
    privateJwkSealed: seal(kek.current, JSON.stringify(privateJwk), signingKeySealingContext(kid)),
    createdAt: now,
    activatedAt: state === 'current' ? now : null,
    retiredAt: null,
  };
}

async function loadKeys(repository: SigningKeyRepository, kek: Keyring): Promise<LoadedKeys> {
  const published = (await repository.list())
    .filter((k) => k.state !== 'retired')
    .sort((a, b) => STATE_ORDER[a.state] - STATE_ORDER[b.state] || b.createdAt.getTime() - a.createdAt.getTime());
  const current = published.find((k) => k.state === 'current');
  const verifiers = new Map<string, KeyObject>();
  for (const k of published) verifiers.set(k.kid, createPublicKey({ key: { kty: 'RSA', n: String(k.publicJwk.n), e: String(k.publicJwk.e) }, format: 'jwk' }));
  return {
    jwks: { keys: published.map(toPublicJwk) },
    signer: current ? { kid: current.kid, key: createPrivateKey({ key: openPrivateJwk(kek, current).jwk, format: 'jwk' }) } : undefined,
    verifiers,
  };
}

/** A private key opened with whichever secret sealed it; `current`: sealed under the current one. */
function openPrivateJwk(kek: Keyring, record: SigningKeyRecord): { jwk: JsonWebKey; current: boolean } {
  const opened = openWithKeyring(kek, record.privateJwkSealed, signingKeySealingContext(record.kid));
  return { jwk: JSON.parse(opened.text) as JsonWebKey, current: opened.current };
}

function toPublicJwk(record: SigningKeyRecord): PublicJwk {
  return {
    kid: record.kid,
    use: 'sig',
    kty: 'RSA',
    alg: 'RS256',
    e: String(record.publicJwk.e),
    n: String(record.publicJwk.n),
  };
}
