/**
 * Throttled sign-in, shared by every instance through the ephemeral store. After
 * IDP_LOGIN_MAX_FAILURES failures a name typed at the sign-in page is locked for a while (one
 * minute, doubling with each further failure, at most 15 minutes), whether or not an account
 * has that name, so the lock tells nothing about who exists. An address that fails
 * IDP_LOGIN_MAX_FAILURES_PER_ADDRESS times within 15 minutes over any names is locked too.
 * Wrong second-factor codes count as failures of the account.
 */
import type { EphemeralStore, EphemeralWrite } from '../store/types.ts';

const WINDOW_SECONDS = 15 * 60;
const FIRST_LOCK_SECONDS = 60;

export interface ThrottleLimits {
  maxFailures: number;
  maxFailuresPerAddress: number;
}

export interface SignInThrottle {
  isThrottled(username: string, address: string): Promise<boolean>;
  recordFailure(username: string, address: string): Promise<void>;
  /** Forgets the failures of a name that signed in (a write for the caller to send, batched). */
  successWrite(username: string): EphemeralWrite;
}

const nameKey = (username: string) => `name:${username.trim().toLowerCase()}`;
const addressKey = (address: string) => `addr:${address}`;

export function createSignInThrottle(ephemeral: EphemeralStore, limits: ThrottleLimits): SignInThrottle {
  return {
    async isThrottled(username, address) {
      const locks = await ephemeral.getMany([{ ns: 'signin-lock', key: nameKey(username) }, { ns: 'signin-lock', key: addressKey(address) }]);
      return locks.some((lock) => lock !== undefined);
    },
    async recordFailure(username, address) {
      const [nameFailures, addressFailures] = await Promise.all([
        ephemeral.increment('signin-failures', nameKey(username), WINDOW_SECONDS),
        ephemeral.increment('signin-failures', addressKey(address), WINDOW_SECONDS),
      ]);
      if (nameFailures >= limits.maxFailures) {
        const lock = Math.min(FIRST_LOCK_SECONDS * 2 ** (nameFailures - limits.maxFailures), WINDOW_SECONDS);
        await ephemeral.set('signin-lock', nameKey(username), 1, lock);
      }
      if (addressFailures >= limits.maxFailuresPerAddress) {
        await ephemeral.set('signin-lock', addressKey(address), 1, WINDOW_SECONDS);
      }
    },
    successWrite: (username) => ({ op: 'delete', ns: 'signin-failures', key: nameKey(username) }),
  };
}
