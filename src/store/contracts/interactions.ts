/** One-time state of a browser's sign-in: used TOTP codes, round trips to an upstream provider, WebAuthn challenges. */

/**
 * TOTP codes already accepted, per user and time step (RFC 6238 §5.2: a code is accepted once),
 * across instances.
 */
export interface UsedTotpCodeStore {
  /** Marks the user's code of `timeStep` used for `ttlSeconds`; true for exactly one caller. */
  claim(userId: string, timeStep: number, ttlSeconds: number): Promise<boolean>;
}

/** The two round trips to an upstream provider: the sign-in (keyed by its `state`) and the sign-out. */
export type RoundTripLeg = 'sign-in' | 'sign-out';

/** What a round trip to an upstream provider must find when it comes back; each is finished once. */
export interface RoundTripStore {
  start(leg: RoundTripLeg, key: string, trip: unknown, ttlSeconds: number): Promise<void>;
  /** The trip, to exactly one caller across instances; undefined when unknown, expired or finished. */
  finish<T>(leg: RoundTripLeg, key: string): Promise<T | undefined>;
}

/** WebAuthn challenges, by the browser and ceremony that asked: whoever verifies takes one once, on any instance. */
export interface PasskeyChallengeStore {
  /** Stores the challenge under `key` (replacing one asked for before). */
  issue(key: string, challenge: unknown, ttlSeconds: number): Promise<void>;
  /** The challenge, to exactly one caller across instances; undefined when unknown, expired or taken. */
  take<T>(key: string): Promise<T | undefined>;
}
