/**
 * Throttled sign-in, shared by every instance through the ephemeral store. Guesses from a
 * browser the account does not know are counted per account and source address: after
 * IDP_LOGIN_MAX_FAILURES failures that pair is locked for a while (one minute, doubling with
 * each further failure, at most 15 minutes), whether or not the account exists, so the lock
 * tells nothing about who exists, and a guesser elsewhere locks nobody else out. Over every
 * address they are counted per account too: after IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT within 15
 * minutes, only known devices may try that account until 15 minutes have passed. An address
 * that fails IDP_LOGIN_MAX_FAILURES_PER_ADDRESS times within 15 minutes over any names is
 * locked for 15 minutes. A known device (device-cookie.ts) has its own count, as a pair has,
 * and none of those locks: failures from elsewhere never lock it out, and one with too many
 * failures is refused until its lock ends. One interaction (a sign-in page and its CSRF token)
 * takes at most IDP_LOGIN_MAX_ATTEMPTS_PER_INTERACTION passwords. Wrong second-factor and
 * enrolment codes count as failures too, and so do wrong password recovery codes: on the
 * address, and on the recovery itself, which takes RECOVERY_CODE_GUESSES before it is void.
 *
 * A guess takes its attempt before it is judged, atomically and on every count at once
 * (AttemptStore.take, one round trip): the attempt that reaches a limit locks
 * at once, so a burst of concurrent guesses gets at most the limit judged, however the requests
 * interleave and on however many instances. A guess judged wrong keeps its attempt; one that
 * was right, or judged nothing (a locked account, a directory that did not answer), gives it back.
 */
import type { AttemptRule, EphemeralStore, EphemeralWrite } from '../store/types.ts';
import { NAMESPACES } from '../store/types.ts';

const WINDOW_SECONDS = 15 * 60;
const FIRST_LOCK_SECONDS = 60;
/** An interaction lives at most 30 minutes (interaction.ts): its count need not live longer. */
const INTERACTION_SECONDS = 30 * 60;

export interface ThrottleLimits {
  maxFailures: number;
  maxFailuresPerAddress: number;
  maxFailuresPerAccount: number;
  maxAttemptsPerInteraction: number;
}

/**
 * Why a guess was refused: a lock of the pair, the address or the known device (`throttled`);
 * the account is closed to unrecognised devices for now (`unrecognised-device`); the
 * interaction used up its passwords (`interaction-used-up`).
 */
export type Refusal = 'throttled' | 'unrecognised-device' | 'interaction-used-up';

/** An attempt taken: kept when the guess was wrong, given back otherwise. */
export interface SignInAttempt {
  /** The guess was right, or nothing was judged: it does not count against anyone. */
  giveBack(): Promise<void>;
}

/** Where a guess comes from besides its address. */
export interface GuessContext {
  /** The id of the browser's device cookie for the account, when it has a good one. */
  device?: string;
  /** The interaction a password is posted in (codes are not counted per interaction). */
  interaction?: string;
}

export interface SignInThrottle {
  /**
   * Takes an attempt for `account` (one name per account: the source's `canonicalAccountName` of what was
   * typed) from `address`; with nothing taken, why not when refused.
   */
  attempt(account: string, address: string, context?: GuessContext): Promise<SignInAttempt | { refused: Refusal }>;
  /**
   * Takes an attempt at a password recovery's code (`recovery`: the key of the recovery) from
   * `address`: refused when the recovery took its guesses (`used-up`) or the address is locked.
   */
  recoveryCodeAttempt(recovery: string, address: string): Promise<SignInAttempt | { refused: 'used-up' | 'throttled' }>;
  /** Forgets the failures of an account from the address it signed in from (a write for the caller to send, batched). */
  successWrite(account: string, address: string): EphemeralWrite;
}

/** Case and surrounding spaces never make another account (sources compare names that way too). */
export const canonicalAccount = (account: string) => account.trim().toLowerCase();
// An address has no space in it: the first space ends it.
const pairKey = (account: string, address: string) => `from:${address} ${canonicalAccount(account)}`;
const accountKey = (account: string) => `account:${canonicalAccount(account)}`;
const addressKey = (address: string) => `addr:${address}`;
const deviceKey = (device: string) => `device:${device}`;
const interactionKey = (interaction: string) => `interaction:${interaction}`;
const recoveryKey = (recovery: string) => `recovery:${recovery}`;

/** Wrong codes a password recovery takes; the one that reaches it voids the recovery. */
export const RECOVERY_CODE_GUESSES = 5;

const rule = (limit: number, windowSeconds: number, lockSeconds: number): AttemptRule => ({ limit, windowSeconds, lockSeconds, maxLockSeconds: windowSeconds });

export function createSignInThrottle(ephemeral: EphemeralStore, limits: ThrottleLimits): SignInThrottle {
  const pairRule = rule(limits.maxFailures, WINDOW_SECONDS, FIRST_LOCK_SECONDS);
  const addressRule = rule(limits.maxFailuresPerAddress, WINDOW_SECONDS, WINDOW_SECONDS);
  const accountRule = rule(limits.maxFailuresPerAccount, WINDOW_SECONDS, WINDOW_SECONDS);
  const interactionRule = rule(limits.maxAttemptsPerInteraction, INTERACTION_SECONDS, INTERACTION_SECONDS);
  // A recovery lives 15 minutes: its lock outlives it, so a used-up recovery never opens again.
  const recoveryRule = rule(RECOVERY_CODE_GUESSES, WINDOW_SECONDS, WINDOW_SECONDS);

  /** What a guess counts on, the first locked one naming the refusal. */
  function countsOf(account: string, address: string, { device, interaction }: GuessContext) {
    const counts = interaction ? [{ key: interactionKey(interaction), rule: interactionRule }] : [];
    if (device) return [...counts, { key: deviceKey(device), rule: pairRule }];
    return [...counts, { key: accountKey(account), rule: accountRule }, { key: pairKey(account, address), rule: pairRule }, { key: addressKey(address), rule: addressRule }];
  }

  function refusalOf(locked: string): Refusal {
    if (locked.startsWith('interaction:')) return 'interaction-used-up';
    return locked.startsWith('account:') ? 'unrecognised-device' : 'throttled';
  }

  return {
    async attempt(account, address, context = {}) {
      const counted = countsOf(account, address, context);
      // All taken at once, or none (a locked address does not use up the account's attempts,
      // nor the reverse): one round trip, one script outside a cluster.
      const locked = await ephemeral.attempts.take(counted);
      if (locked !== undefined) return { refused: refusalOf(locked) };
      return { giveBack: () => ephemeral.attempts.giveBack(counted.map(({ key }) => key)) };
    },
    async recoveryCodeAttempt(recovery, address) {
      const counted = [{ key: recoveryKey(recovery), rule: recoveryRule }, { key: addressKey(address), rule: addressRule }];
      const locked = await ephemeral.attempts.take(counted);
      if (locked !== undefined) return { refused: locked.startsWith('recovery:') ? 'used-up' : 'throttled' };
      return { giveBack: () => ephemeral.attempts.giveBack(counted.map(({ key }) => key)) };
    },
    // Only the pair: the count over every address is what bounds guessing, and a sign-in must
    // not hand a guesser a fresh allowance.
    successWrite: (account, address) => ({ op: 'delete', ns: NAMESPACES.signInAttempts, key: pairKey(account, address) }),
  };
}
