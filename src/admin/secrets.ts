/**
 * Secrets: a client's generated secret and its rotation, and resealing under IDP_SECRET
 * everything in the database that only one of IDP_SECRET_PREVIOUS opens (signing keys, TOTP
 * secrets, the secret's check value), so the previous secrets can be dropped. What lives in the
 * ephemeral store (sessions, sign-ins in progress) is not touched: it expires by itself.
 */
import { staleUserSecrets } from '../sessions/mfa.ts';
import type { DurableStore } from '../store/types.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { hashClientSecret, randomToken } from '../tokens/opaque.ts';
import { deriveKeyring, type MasterSecrets } from '../tokens/secret-box.ts';
import { resealSecretCheck } from '../tokens/secret-check.ts';
import { AdminError } from './errors.ts';

/** 256 random bits, so a salted SHA-256 is enough to store it (src/tokens/opaque.ts). */
export function newClientSecret(): { secret: string; hash: string } {
  const secret = randomToken();
  return { secret, hash: hashClientSecret(secret) };
}

export interface SecretRotated {
  kind: 'rotated';
  clientId: string;
  /** Shown once; the previous secret stops working at once. */
  secret: string;
}

export async function rotateClientSecret(durable: DurableStore, id: string): Promise<SecretRotated> {
  const client = await durable.clients.get(id);
  if (!client) throw new AdminError('not_found', `no client with id ${id}`);
  if (client.secretHash === null) throw new AdminError('conflict', `client ${id} is a public client: it has no secret to rotate`);
  const { secret, hash } = newClientSecret();
  // The expiry belonged to the old secret; the new one does not expire until an administrator says so.
  await durable.clients.update(id, { secretHash: hash, secretExpiresAt: null });
  return { kind: 'rotated', clientId: id, secret };
}

export interface Resealed {
  kind: 'resealed';
  signingKeys: number;
  totpSecrets: number;
  checkValue: boolean;
}

export async function resealSecrets(deps: { durable: DurableStore; keys: KeyManager; secrets: MasterSecrets }): Promise<Resealed> {
  const { durable, keys, secrets } = deps;
  // Everything is opened before anything is written: a value no secret opens stops it all.
  const stale = staleUserSecrets(await durable.users.list(), deriveKeyring(secrets, 'totp-secrets'));
  const signingKeys = await keys.reseal();
  for (const { factorId, secretSealed } of stale) await durable.factors.reseal(factorId, secretSealed);
  const checkValue = await resealSecretCheck(durable, secrets);
  return { kind: 'resealed', signingKeys, totpSecrets: stale.length, checkValue };
}
