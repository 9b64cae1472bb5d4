/** Signing keys and the master secret's check value. */
import type { SigningKeyState, SigningKeyRecord } from '../records.ts';
import type { OutboxRepository } from './webhooks.ts';

export interface SigningKeyRepository {
  list(): Promise<SigningKeyRecord[]>;
  /**
   * Runs `fn` holding the cluster-wide signing-key lock, in one transaction, so that two
   * instances never both create or rotate keys. `fn` must not wait on anything but the store.
   */
  withLock<T>(fn: (keys: SigningKeyTransaction) => Promise<T>): Promise<T>;
}

export interface SigningKeyTransaction {
  list(): Promise<SigningKeyRecord[]>;
  insert(key: SigningKeyRecord): Promise<void>;
  setState(kid: string, state: SigningKeyState, at: Date): Promise<void>;
  /** Replaces the sealed private key (the same key, sealed under another master secret). */
  reseal(kid: string, privateJwkSealed: string): Promise<void>;
  /** The outbox on the same transaction: the events of a key change commit, or not, with it. */
  outbox: Pick<OutboxRepository, 'appendMany'>;
}

/** The check value of the master secret (one row): what tells a wrong IDP_SECRET at start. */
export interface SecretCheckRepository {
  /** The sealed check value; undefined until the first start wrote it. */
  get(): Promise<string | undefined>;
  /**
   * Writes the check value: with `replacing` undefined only if there is none yet (several
   * instances may start at once), else only if it is still `replacing`. False when another
   * writer came first.
   */
  put(sealed: string, replacing?: string): Promise<boolean>;
}
