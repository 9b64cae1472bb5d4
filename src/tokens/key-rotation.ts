/**
 * The automatic rotation schedule as one pure function: given the keys and the time, what is
 * due. Checked once without the lock (usually nothing is due) and again under it.
 */
import type { SigningKeyRecord } from '../store/types.ts';

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
const RETIRE_MARGIN_SECONDS = 300;

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
