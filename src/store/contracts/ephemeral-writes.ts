/** Writes to the ephemeral store, batched or tied to a delete. */
import type { Namespace } from '../ephemeral/namespaces.ts';

/**
 * One write of a batch (`EphemeralStore.write`). An index (`index`, `unindex`) is a set of
 * members under one key, each with its own expiry; the key lives as long as its latest member
 * (`EphemeralStore.indexed`).
 */
export type EphemeralWrite =
  | { op: 'set'; ns: Namespace; key: string; value: unknown; ttlSeconds: number }
  | { op: 'delete'; ns: Namespace; key: string }
  /** Adds `member` to the index `key`, or renews it, to expire `ttlSeconds` from now. */
  | { op: 'index'; ns: Namespace; key: string; member: string; ttlSeconds: number }
  | { op: 'unindex'; ns: Namespace; key: string; member: string };

/** The writes of each outcome of `EphemeralStore.deleteAndWrite`. */
export interface EphemeralWritesByOutcome {
  deleted: readonly EphemeralWrite[];
  missing: readonly EphemeralWrite[];
}
