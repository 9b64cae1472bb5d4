/**
 * The automatic rotation schedule as one pure function: given the keys and the time, what is
 * due. Checked once without the lock (usually nothing is due) and again under it.
 */
import type { SigningKeyRecord } from '../store/records.ts';

/** The automatic rotation schedule, in seconds. */
export interface RotationPolicy {
  /** A key signs this long before its successor takes over. */
  intervalSeconds: number;
  /** A successor is published this long before it signs, so every cache has seen it. */
  publishAheadSeconds: number;
  /** The longest lifetime of a token a key signed: a demoted key is retired after it. */
  maxTokenLifetimeSeconds: number;
}

/** Clock skew allowed to relying parties verifying a token near its expiry. */
export const RETIRE_MARGIN_SECONDS = 300;

/**
 * The longest a token a key signed stays valid: ID tokens and access tokens live as long as
 * their client's access-token lifetime, counted as at least an hour. Refresh tokens are opaque
 * (a MAC, not a signature of this key), so they do not count.
 */
export function maxTokenLifetimeSeconds(accessTokenLifetimes: readonly number[]): number {
  return Math.max(3600, ...accessTokenLifetimes);
}

/** How long the tokens a demoted key signed may still verify. */
export interface TokensStillValid {
  /** When the key stopped signing: when its successor became the signer. */
  signedUntil: Date;
  /** `signedUntil` plus the longest token lifetime and the clock-skew margin. */
  verifiesUntil: Date;
}

/**
 * Until when tokens signed by `key` may verify, or undefined when none can: it never signed,
 * or it stopped long enough ago. The time it stopped is its successor's activation; a
 * `previous` key with none recorded counts as having signed until `now`.
 */
export function tokensStillValid(key: SigningKeyRecord, keys: readonly SigningKeyRecord[], maxLifetimeSeconds: number, now: number): TokensStillValid | undefined {
  if (key.state !== 'previous') return undefined;
  const since = (key.activatedAt ?? key.createdAt).getTime();
  const successors = keys.map((k) => k.activatedAt?.getTime()).filter((t): t is number => t !== undefined && t > since);
  const signedUntil = successors.length > 0 ? Math.min(...successors) : now;
  const verifiesUntil = signedUntil + (maxLifetimeSeconds + RETIRE_MARGIN_SECONDS) * 1000;
  return verifiesUntil > now ? { signedUntil: new Date(signedUntil), verifiesUntil: new Date(verifiesUntil) } : undefined;
}

export interface RotationPlan {
  /** Publish a successor (state next). */
  publish: boolean;
  /** Make this next key the signer, demoting the current one. */
  promote: { from: string; to: string } | undefined;
  /** Retire these previous keys: every token they signed has expired. */
  retire: string[];
}

export function planRotation(keys: readonly SigningKeyRecord[], policy: RotationPolicy, now: number): RotationPlan {
  const plan: RotationPlan = { publish: false, promote: undefined, retire: [] };
  const current = keys.find((k) => k.state === 'current');
  if (!current) return plan;
  const signingFor = (now - (current.activatedAt ?? current.createdAt).getTime()) / 1000;
  const next = keys.find((k) => k.state === 'next');
  if (!next) {
    plan.publish = signingFor >= policy.intervalSeconds - policy.publishAheadSeconds;
  } else if (signingFor >= policy.intervalSeconds && (now - next.createdAt.getTime()) / 1000 >= policy.publishAheadSeconds) {
    plan.promote = { from: current.kid, to: next.kid };
    return plan;
  }
  // The current key has signed alone long enough that nothing signed by an older one is valid.
  if (signingFor >= policy.maxTokenLifetimeSeconds + RETIRE_MARGIN_SECONDS) {
    plan.retire = keys.filter((k) => k.state === 'previous').map((k) => k.kid);
  }
  return plan;
}

export function isEmptyPlan(plan: RotationPlan): boolean {
  return !plan.publish && !plan.promote && plan.retire.length === 0;
}
