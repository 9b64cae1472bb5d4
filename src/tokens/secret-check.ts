/**
 * Whether the master secret in force is the one this database's sealed values were sealed
 * under. A known text is sealed under IDP_SECRET at the first start (the check value); every
 * start, and every command that seals or opens, opens it first. A wrong secret is then one
 * line at start, instead of a server that reports ready and fails at every use of a key.
 */
import type { DurableStore } from '../store/types.ts';
import { deriveKeyring, openWithKeyring, seal, type Keyring, type MasterSecrets } from './secret-box.ts';
import { signingKeySealingContext } from './sealing-contexts.ts';

const CHECK_TEXT = 'idp master secret check';
const CHECK_CONTEXT = 'secret-check';

/**
 * `current`: IDP_SECRET opens it; `previous`: only one of IDP_SECRET_PREVIOUS does (run
 * `idp secrets reseal`); `wrong`: none does; `absent`: nothing was sealed yet.
 */
export type SecretCheckState = 'current' | 'previous' | 'wrong' | 'absent';

/** What is wrong, and what to do: the one line a start or a command stops with (exit 2). */
export const WRONG_SECRET = 'IDP_SECRET is not the secret this database was set up with (its signing keys and TOTP secrets do not open)';
export const WRONG_SECRET_FIX = 'set IDP_SECRET to that secret; to change secrets, set the new one as IDP_SECRET and the old one as IDP_SECRET_PREVIOUS, then run idp secrets reseal';
export const WRONG_SECRET_MESSAGE = `${WRONG_SECRET}: ${WRONG_SECRET_FIX}`;

type Store = Pick<DurableStore, 'secretCheck' | 'signingKeys'>;

/** Reads the state without writing anything (what `idp doctor` reports). */
export async function readSecretCheck(durable: Store, secrets: MasterSecrets): Promise<SecretCheckState> {
  const ring = deriveKeyring(secrets, 'secret-check');
  const sealed = await durable.secretCheck.get();
  if (sealed !== undefined) return openState(ring, sealed);
  // A database from before the check value: its current signing key tells instead.
  const current = (await durable.signingKeys.list()).find((k) => k.state === 'current');
  if (!current) return 'absent';
  try {
    return openWithKeyring(deriveKeyring(secrets, 'signing-keys'), current.privateJwkSealed, signingKeySealingContext(current.kid)).current ? 'absent' : 'previous';
  } catch {
    return 'wrong';
  }
}

/** Reads the state, writing the check value under IDP_SECRET when there is none yet. */
export async function ensureSecretCheck(durable: Store, secrets: MasterSecrets): Promise<Exclude<SecretCheckState, 'absent'>> {
  const state = await readSecretCheck(durable, secrets);
  if (state !== 'absent') return state;
  const ring = deriveKeyring(secrets, 'secret-check');
  if (await durable.secretCheck.put(seal(ring.current, CHECK_TEXT, CHECK_CONTEXT))) return 'current';
  // Another instance, starting at the same moment, wrote it first: its secret decides.
  const written = await durable.secretCheck.get();
  return written === undefined ? 'wrong' : openState(ring, written);
}

/** Seals the check value under IDP_SECRET if a previous secret sealed it; true if it did. */
export async function resealSecretCheck(durable: Store, secrets: MasterSecrets): Promise<boolean> {
  const ring = deriveKeyring(secrets, 'secret-check');
  const sealed = await durable.secretCheck.get();
  if (sealed === undefined) return durable.secretCheck.put(seal(ring.current, CHECK_TEXT, CHECK_CONTEXT));
  if (openState(ring, sealed) !== 'previous') return false;
  return durable.secretCheck.put(seal(ring.current, CHECK_TEXT, CHECK_CONTEXT), sealed);
}

function openState(ring: Keyring, sealed: string): 'current' | 'previous' | 'wrong' {
  try {
    const opened = openWithKeyring(ring, sealed, CHECK_CONTEXT);
    if (opened.text !== CHECK_TEXT) return 'wrong';
    return opened.current ? 'current' : 'previous';
  } catch {
    return 'wrong';
  }
}
