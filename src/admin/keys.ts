/**
 * Signing keys. Rotation adds a key and makes it the signer at once; the former signer stays
 * published (`previous`) until it is retired, so tokens it signed still verify. Retiring a key
 * whose tokens may still be valid is refused unless forced: forcing invalidates them at once.
 */
import type { Clock } from '../clock.ts';
import type { AuditEvent, KeyActor } from '../events/audit-events.ts';
import { recordInTransaction, type ChangeRecorder } from '../events/in-transaction.ts';
import type { ClientRecord, SigningKeyRecord } from '../store/records.ts';
import { maxTokenLifetimeSeconds, RETIRE_MARGIN_SECONDS } from '../tokens/key-rotation.ts';
import { JWKS_MAX_AGE_SECONDS, type KeyManager, type RecordKeyChange, type TokensStillValid } from '../tokens/keys.ts';
import { AdminError } from './errors.ts';

/** Who changes keys, and where their events go: written in the key lock's transaction, logged once it committed. */
export interface KeyChangeRecording {
  recorder: ChangeRecorder;
  clock: Clock;
  actor: KeyActor;
  /** The administrator's `sub`, when the console makes the change. */
  adminSub?: string;
}

/**
 * A key change's record: `record` writes its events (`key_published`, `key_rotated`,
 * `key_retired`) on the key lock's transaction; `logCommitted` logs them once that committed.
 */
export function keyChangeRecord({ recorder, clock, actor, adminSub }: KeyChangeRecording): { record: RecordKeyChange; logCommitted(): void } {
  const written: AuditEvent[] = [];
  const fields = { actor, ...(adminSub === undefined ? {} : { admin_sub: adminSub }) };
  return {
    async record(tx, changed) {
      const events: AuditEvent[] = [
        ...changed.published.map((kid) => ({ type: 'key_published' as const, kid, ...fields })),
        ...changed.promoted.map((kid) => ({ type: 'key_rotated' as const, kid, ...fields })),
        ...changed.retired.map((kid) => ({ type: 'key_retired' as const, kid, ...fields })),
      ];
      await recordInTransaction(tx, events, clock, recorder.context);
      written.push(...events);
    },
    logCommitted() {
      for (const event of written.splice(0)) recorder.logged(event);
    },
  };
}

export async function listKeys(keys: KeyManager): Promise<SigningKeyRecord[]> {
  return keys.list();
}

export interface KeyRotated {
  kind: 'rotated';
  key: SigningKeyRecord;
  /** Relying parties that cached the key set before the rotation may not know the new key for this long. */
  jwksMaxAgeSeconds: number;
}

export async function rotateKey(keys: KeyManager, recording: KeyChangeRecording): Promise<KeyRotated> {
  const { record, logCommitted } = keyChangeRecord(recording);
  const key = await keys.rotate(record);
  logCommitted();
  return { kind: 'rotated', key, jwksMaxAgeSeconds: JWKS_MAX_AGE_SECONDS };
}

export interface KeyRetired {
  kind: 'retired';
  kid: string;
  /** Set when `force` retired a key whose tokens were still valid: they stopped verifying at once. */
  invalidated: TokensStillValid | undefined;
}

export interface RetireOptions {
  /** Retire even when tokens the key signed may still be valid. */
  force: boolean;
  /** Every client, for the longest token lifetime. */
  clients: readonly Pick<ClientRecord, 'accessTokenLifetime'>[];
}

export async function retireKey(keys: KeyManager, kid: string, options: RetireOptions, recording: KeyChangeRecording): Promise<KeyRetired> {
  const maxLifetime = maxTokenLifetimeSeconds(options.clients.map((c) => c.accessTokenLifetime));
  const { record, logCommitted } = keyChangeRecord(recording);
  const result = await keys.retire(kid, { maxTokenLifetimeSeconds: maxLifetime, force: options.force }, record);
  logCommitted();
  if (result === 'not_found') throw new AdminError('not_found', `no signing key with kid ${kid}`);
  if (result === 'is_current') throw new AdminError('conflict', `signing key ${kid} is the current signer: rotate first (idp keys rotate), then retire it`);
  if (result === 'already_retired') throw new AdminError('conflict', `signing key ${kid} is already retired`);
  if (result === 'retired') return { kind: 'retired', kid, invalidated: undefined };
  if (result.kind === 'forced') return { kind: 'retired', kid, invalidated: result };
  throw new AdminError('conflict',
    `signing key ${kid} may still verify tokens until ${result.verifiesUntil.toISOString()} ` +
    `(it signed until ${result.signedUntil.toISOString()}, tokens live up to ${maxLifetime} s, plus ${RETIRE_MARGIN_SECONDS} s for clock skew): ` +
    'retire it after that, or use --force, which makes every token it signed invalid at once (relying parties must sign their users in again)');
}
