/**
 * A user's passkeys as the account page shows and changes them: listed (never their key),
 * renamed, removed. Each change is of the user's own passkey only, and removing the user's last
 * second factor is refused (factor-removal.ts).
 */
import { passkeyFactors, type FactorRecord, type UserRecord } from '../store/records.ts';
import type { FactorRepository } from '../store/types.ts';
import { removeOwnFactor, type RemovalDeps } from './factor-removal.ts';
import { entryPerRow, type FactorKindSpec } from './factor-kind.ts';

/** Passkeys: each listed by the name the user gave it. */
export const passkeyKind: FactorKindSpec = { kind: 'passkey', label: 'Passkey', entries: entryPerRow };

/** What a page or a command shows of a passkey. */
export interface PasskeySummary {
  id: string;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  /** Whether the passkey is synced (backed up) by its provider. */
  backedUp: boolean;
}

export const MAX_PASSKEY_NAME_LENGTH = 100;

export type PasskeyChange = 'ok' | 'not_found' | 'invalid_name' | 'last_second_factor';

export function summarisePasskey(factor: FactorRecord): PasskeySummary {
  return { id: factor.id, name: factor.name, createdAt: factor.createdAt, lastUsedAt: factor.lastUsedAt, backedUp: factor.passkey?.backedUp ?? false };
}

/** The user's passkeys, oldest first. */
export function listPasskeys(user: Pick<UserRecord, 'factors'>): PasskeySummary[] {
  return passkeyFactors(user).map(summarisePasskey);
}

/** A name as typed, trimmed, or undefined when empty, too long or holding control characters. */
export function passkeyName(typed: string): string | undefined {
  const name = typed.trim().replace(/\s+/g, ' ');
  return name.length >= 1 && name.length <= MAX_PASSKEY_NAME_LENGTH && !/\p{Cc}/u.test(name) ? name : undefined;
}

/** The name a new passkey gets when none is typed: "Passkey", "Passkey 2", ... */
export function defaultPasskeyName(user: Pick<UserRecord, 'factors'>): string {
  const taken = new Set(passkeyFactors(user).map((f) => f.name));
  for (let n = 1; ; n += 1) {
    const name = n === 1 ? 'Passkey' : `Passkey ${n}`;
    if (!taken.has(name)) return name;
  }
}

const ownPasskey = (user: Pick<UserRecord, 'factors'>, factorId: string) => passkeyFactors(user).find((f) => f.id === factorId);

export async function renamePasskey(deps: { factors: Pick<FactorRepository, 'rename'> }, user: Pick<UserRecord, 'factors'>, factorId: string, typed: string): Promise<PasskeyChange> {
  if (!ownPasskey(user, factorId)) return 'not_found';
  const name = passkeyName(typed);
  if (!name) return 'invalid_name';
  return (await deps.factors.rename(factorId, name)) ? 'ok' : 'not_found';
}

/**
 * Removes one of the user's passkeys, under the one rule of every factor's removal
 * (factor-removal.ts): never the user's last authenticator app or passkey.
 */
export async function removePasskey(deps: RemovalDeps, user: Pick<UserRecord, 'id' | 'email' | 'factors'>, factorId: string): Promise<PasskeyChange> {
  const own = ownPasskey(user, factorId);
  if (!own) return 'not_found';
  const result = await removeOwnFactor(deps, user, own, `The passkey "${own.name}" was removed.`);
  return result === 'removed' ? 'ok' : result;
}
