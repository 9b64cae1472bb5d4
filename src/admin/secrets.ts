/**
 * Secrets: a client's secret's rotation, and resealing under IDP_SECRET
 * everything in the database that only one of IDP_SECRET_PREVIOUS opens (signing keys, TOTP
 * secrets, webhook endpoints' signing secrets, the secret's check value), so the previous
 * secrets can be dropped. What lives in the
 * ephemeral store (sessions, sign-ins in progress) is not touched: it expires by itself.
 */
import { staleUserSecrets } from '../factors/authenticator-app.ts';
import type { ClientRecord, PreviousClientSecret } from '../store/records.ts';
import type { DurableStore } from '../store/types.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { deriveKeyring, type MasterSecrets } from '../tokens/secret-box.ts';
import { resealSecretCheck } from '../tokens/secret-check.ts';
import { resealedWebhookSecret } from '../tokens/webhook-secrets.ts';
import { changeClient, changedFields } from './client-update.ts';
import { newClientSecret } from './clients.ts';
import { AdminError } from './errors.ts';
import { recordedChange, type ChangeActor, type ChangeDeps } from './recorded-change.ts';

export interface SecretRotated {
  kind: 'rotated';
  clientId: string;
  /** Shown once. */
  secret: string;
  /** Until when the secret it replaced is still accepted; undefined: it stopped working at once. */
  previousValidUntil: Date | undefined;
}

/** The longest a replaced secret may stay valid: a rotation, not a second permanent secret. */
export const MAX_KEEP_OLD_SECONDS = 30 * 24 * 3600;

export interface RotateOptions {
  /** Keep accepting the replaced secret this many seconds (0: not at all). */
  keepOldForSeconds: number;
  /** Milliseconds since the epoch. */
  now: number;
}

/**
 * Without `keep`, the replaced secret stops working at once. Its event names the fields that
 * changed, as any change of a client does.
 */
export async function rotateClientSecret(deps: ChangeDeps, id: string, actor: ChangeActor, keep?: RotateOptions): Promise<SecretRotated & { version: number; client: ClientRecord }> {
  const { keepOldForSeconds, now } = keep ?? { keepOldForSeconds: 0, now: 0 };
  if (!Number.isInteger(keepOldForSeconds) || keepOldForSeconds < 0 || keepOldForSeconds > MAX_KEEP_OLD_SECONDS) {
    throw new AdminError('invalid', `the old secret can be kept for at most ${MAX_KEEP_OLD_SECONDS / 86400} days (${MAX_KEEP_OLD_SECONDS} s)`);
  }
  const { secret, hash } = newClientSecret();
  let previousValidUntil: Date | undefined;
  const { client } = await changeClient(deps, id, actor, async (_tx, { record }) => {
    if (record.secretHash === null) throw new AdminError('conflict', `client ${id} is a public client: it has no secret to rotate`);
    const previousSecret = keptSecret(record.secretHash, record.secretExpiresAt, keepOldForSeconds, now);
    previousValidUntil = previousSecret?.expiresAt;
    // The expiry belonged to the old secret; the new one does not expire until an administrator says so.
    // A secret kept from an earlier rotation is replaced (or dropped): a client holds at most two.
    const rotated: ClientRecord = { ...record, secretHash: hash, secretExpiresAt: null, previousSecret };
    return { record: rotated, changed: changedFields(record, rotated) };
  });
  return { kind: 'rotated', clientId: id, secret, previousValidUntil, version: client.version, client: client.record };
}

/** The replaced secret, kept for the window but never past its own expiry. */
function keptSecret(hash: string, expiresAt: Date | null, keepOldForSeconds: number, now: number): PreviousClientSecret | null {
  const until = Math.min(now + keepOldForSeconds * 1000, expiresAt?.getTime() ?? Infinity);
  return until > now ? { hash, expiresAt: new Date(until) } : null;
}

export interface Resealed {
  kind: 'resealed';
  signingKeys: number;
  totpSecrets: number;
  /** Webhook endpoints whose signing secret (or previous one) was resealed. */
  webhookSecrets: number;
  checkValue: boolean;
}

/** The kinds of sealed values written again under IDP_SECRET (the `fields` of the change). */
export function resealedFields(done: Resealed): string[] {
  const counts = { signing_keys: done.signingKeys, totp_secrets: done.totpSecrets, webhook_secrets: done.webhookSecrets, check_value: done.checkValue };
  return Object.entries(counts).filter(([, count]) => count !== 0 && count !== false).map(([name]) => name);
}

/**
 * Seals again under the current master secret what only a previous one opens. The signing keys
 * are resealed first, under the cluster-wide signing-key lock in a transaction of the key
 * manager's; the rest (TOTP secrets, webhook secrets, the check value) in one transaction with
 * the change's `admin_change` event.
 */
export async function resealSecrets(deps: ChangeDeps & { keys: KeyManager; secrets: MasterSecrets }, actor: ChangeActor): Promise<Resealed> {
  const { durable, keys, secrets } = deps;
  // Everything is opened before anything is written: a value no secret opens stops it all.
  const stale = staleUserSecrets(await durable.users.list(), deriveKeyring(secrets, 'totp-secrets'));
  const webhooks = await staleWebhookSecrets(durable, deriveKeyring(secrets, 'webhook-secrets'));
  const signingKeys = await keys.reseal();
  return recordedChange(deps, actor, 'sealed values', async (tx) => {
    for (const { factorId, secretSealed } of stale) await tx.factors.reseal(factorId, secretSealed);
    for (const { id, change } of webhooks) await tx.webhooks.update(id, change);
    const checkValue = await resealSecretCheck(tx, secrets);
    const result: Resealed = { kind: 'resealed', signingKeys, totpSecrets: stale.length, webhookSecrets: webhooks.length, checkValue };
    return { result, change: { action: 'reseal', resource: 'sealed_values', resource_id: 'IDP_SECRET', fields: resealedFields(result) } };
  });
}

/** Endpoints whose secrets only a previous master secret opens, with those secrets sealed again. */
async function staleWebhookSecrets(durable: DurableStore, ring: ReturnType<typeof deriveKeyring>) {
  return (await durable.webhooks.list()).flatMap((endpoint) => {
    const secretSealed = resealedWebhookSecret(ring, endpoint.id, endpoint.secretSealed);
    const previous = endpoint.previousSecretSealed === null ? undefined : resealedWebhookSecret(ring, endpoint.id, endpoint.previousSecretSealed);
    if (secretSealed === undefined && previous === undefined) return [];
    return [{ id: endpoint.id, change: { ...(secretSealed ? { secretSealed } : {}), ...(previous ? { previousSecretSealed: previous } : {}) } }];
  });
}
