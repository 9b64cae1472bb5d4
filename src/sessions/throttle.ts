/**
 * Throttled sign-in, shared by every instance through the ephemeral store. After
 * IDP_LOGIN_MAX_FAILURES failures an account is locked for a while (one minute, doubling with
 * each further failure, at most 15 minutes), whether or not it exists, so the lock tells nothing
 * about who exists. An address that fails IDP_LOGIN_MAX_FAILURES_PER_ADDRESS times within 15
 * minutes over any names is locked for 15 minutes. Wrong second-factor and enrolment codes count
 * as failures of the account.
 *
 * A guess takes its attempt before it is judged, atomically (AttemptStore.take): the
 * attempt that reaches the limit locks at once, so a burst of concurrent guesses gets at most
 * the limit judged, however the requests interleave and on however many instances. A guess
 * judged wrong keeps its attempt; one that was right, or judged nothing (a locked account, a
 * directory that did not answer), gives it back.
 */
import type { AttemptRule, EphemeralStore, EphemeralWrite } from '../store/types.ts';
import { NAMESPACES } from '../store/types.ts';

const WINDOW_SECONDS = 15 * 60;
const FIRST_LOCK_SECONDS = 60;

export interface ThrottleLimits {
  maxFailures: number;
  maxFailuresPerAddress: number;
}

/** An attempt taken: kept when the guess was wrong, given back otherwise. */
export interface SignInAttempt {
  /** The guess was right, or nothing was judged: it does not count against the account or the address. */
  giveBack(): Promise<void>;
}

export interface SignInThrottle {
  /**
   * Takes an attempt for `account` (one name per account: the source's `accountOf` of what was
   * typed) from `address`; undefined, with nothing taken, when either is locked.
   */
  attempt(account: string, address: string): Promise<SignInAttempt | undefined>;
  /** Forgets the failures of an account that signed in (a write for the caller to send, batched). */
  successWrite(account: string): EphemeralWrite;
}

// Case and surrounding spaces never make another account (sources compare names that way too).
const accountKey = (account: string) => `name:${account.trim().toLowerCase()}`;
const addressKey = (address: string) => `addr:${address}`;

export function createSignInThrottle(ephemeral: EphemeralStore, limits: ThrottleLimits): SignInThrottle {
  const accountRule: AttemptRule = {
    limit: limits.maxFailures, windowSeconds: WINDOW_SECONDS, lockSeconds: FIRST_LOCK_SECONDS, maxLockSeconds: WINDOW_SECONDS,
  };
  const addressRule: AttemptRule = {
    limit: limits.maxFailuresPerAddress, windowSeconds: WINDOW_SECONDS, lockSeconds: WINDOW_SECONDS, maxLockSeconds: WINDOW_SECONDS,
  };
  return {
    async attempt(account, address) {
      const counted = [{ key: accountKey(account), rule: accountRule }, { key: addressKey(address), rule: addressRule }];
      // Both taken at once, or neither (a locked address does not use up the account's attempts,
      // nor the reverse): one round trip, one script outside a cluster.
      if (!(await ephemeral.attempts.take(counted))) return undefined;
      return { giveBack: () => ephemeral.attempts.giveBack(counted.map(({ key }) => key)) };
    },
    successWrite: (account) => ({ op: 'delete', ns: NAMESPACES.signInAttempts, key: accountKey(account) }),
  };
}
