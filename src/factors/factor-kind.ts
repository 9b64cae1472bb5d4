/**
 * What every kind of second factor tells the places that list them (the administration API's and
 * console's user, the command line's): its name for a person and its entries from the stored rows.
 * One implementation per kind, next to the rest of that kind's code; factor-kinds.ts lists them.
 */
import type { FactorKind, FactorRecord } from '../store/records.ts';

/** One entry of a user's list of second factors: never a secret, a hash or a key. */
export interface FactorEntry {
  kind: FactorKind;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** For a kind listed as one entry for many rows (recovery codes): how many rows are left. */
  remaining?: number;
}

export interface FactorKindSpec {
  kind: FactorKind;
  /** How a person is told what it is ("Authenticator app"). */
  label: string;
  /** The entries listed for the user's stored rows of this kind (oldest first; none for none). */
  entries(rows: readonly FactorRecord[]): FactorEntry[];
}

/** One entry per row: a kind each of whose rows a person set up and names (the app, a passkey). */
export function entryPerRow(rows: readonly FactorRecord[]): FactorEntry[] {
  return rows.map((row) => ({ kind: row.kind, name: row.name, createdAt: row.createdAt, lastUsedAt: row.lastUsedAt }));
}
