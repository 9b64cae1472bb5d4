/** Users' second factors. */
import type { FactorRecord, FactorInput, FactorKind } from '../records.ts';

/**
 * Users' second factors. Each change is announced as a change of its user (`onChange`:
 * `user`), so cached users drop their factors on every instance.
 */
export interface FactorRepository {
  /** A user's factors, oldest first. */
  listForUser(userId: string): Promise<FactorRecord[]>;
  /** Adds a factor; undefined when the user already has their one factor of that kind ('totp'), or a passkey's credential id is stored already. */
  add(factor: FactorInput): Promise<FactorRecord | undefined>;
  remove(id: string): Promise<boolean>;
  /** Records a use at `at` (not announced: nothing a sign-in decides on changes). */
  touch(id: string, at: Date): Promise<void>;
  /** Replaces the sealed secret (the same secret, sealed under another master secret). */
  reseal(id: string, secretSealed: string): Promise<void>;
  /**
   * Makes `hashes` (keyed hashes of new codes) the user's recovery codes, each a row named
   * `name`, in one statement: the old set stops working as the new one is stored. Throws,
   * writing nothing, when the user does not exist or a hash repeats.
   */
  replaceRecoveryCodes(userId: string, hashes: readonly string[], name: string): Promise<FactorRecord[]>;
  /**
   * Uses up the user's recovery code whose hash is one of `candidates` (one code's hash under
   * each master secret in force) by deleting its row: of any number of callers at once, on any
   * instance, one gets it. The codes left are marked used at `at` (the set was last used then).
   * Undefined when no code matched; else how many are left.
   */
  consumeRecoveryCode(userId: string, candidates: readonly string[], at: Date): Promise<{ remaining: number } | undefined>;
  /** Removes every second factor of the user (recovery codes included); returns what was removed. */
  removeAllForUser(userId: string): Promise<FactorRecord[]>;
  /** The passkey with this credential id, read now (not from a cached user: its counter moves). */
  findPasskey(credentialId: string): Promise<FactorRecord | undefined>;
  /**
   * Records a sign-in with a passkey: its new counter, backup state and time of use, only when
   * the counter moved forward (or stays 0 where the authenticator keeps none). False when it did
   * not (a replay, a clone, or another sign-in that got there first): nothing is written.
   */
  recordPasskeyUse(id: string, use: { signCount: number; backedUp: boolean; at: Date }): Promise<boolean>;
  /**
   * Removes the user's factor `id` unless it is their last one of `standing` (the kinds that are
   * a second factor on their own): `last` then, and nothing removed. Decided with the user's row
   * locked, so two removals at once cannot take the last two.
   */
  removeUnlessLast(userId: string, id: string, standing: readonly FactorKind[]): Promise<'removed' | 'last' | 'not_found'>;
  /** Renames a factor; false when it is gone. Announced, as every change a user sees. */
  rename(id: string, name: string): Promise<boolean>;
}
