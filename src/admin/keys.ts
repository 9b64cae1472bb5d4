/**
 * Signing keys. Rotation adds a key and makes it the signer at once; the former signer stays
 * published (`previous`) until it is retired, so tokens it signed still verify.
 */
import type { SigningKeyRecord } from '../store/types.ts';
import type { KeyManager } from '../tokens/keys.ts';
import { AdminError } from './errors.ts';

export async function listKeys(keys: KeyManager): Promise<SigningKeyRecord[]> {
  return keys.list();
}

export async function rotateKey(keys: KeyManager): Promise<{ kind: 'rotated'; key: SigningKeyRecord }> {
  return { kind: 'rotated', key: await keys.rotate() };
}

export async function retireKey(keys: KeyManager, kid: string): Promise<{ kind: 'retired'; kid: string }> {
  const result = await keys.retire(kid);
  if (result === 'not_found') throw new AdminError('not_found', `no signing key with kid ${kid}`);
  if (result === 'is_current') throw new AdminError('conflict', `signing key ${kid} is the current signer: rotate first (idp keys rotate), then retire it`);
  if (result === 'already_retired') throw new AdminError('conflict', `signing key ${kid} is already retired`);
  return { kind: 'retired', kid };
}
