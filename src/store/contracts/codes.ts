/** Authorization codes. */
import type { CodeRecord, IssuedFromCode } from '../records.ts';
import type { EphemeralWrite } from './ephemeral-writes.ts';

/** The outcome of redeeming a code (`CodeStore.redeem`). */
export type CodeRedemption =
  | { outcome: 'redeemed'; record: CodeRecord }
  /** A second redemption: `issued` is what the first one issued, once it has recorded it. */
  | { outcome: 'replayed'; issued: IssuedFromCode | undefined }
  /** Never issued, or expired. */
  | { outcome: 'unknown' };

/**
 * Authorization codes (RFC 6749 §4.1.2): single use across instances, with what the first use
 * issued kept so that a replay revokes it (OAuth 2.0 Security BCP §4.5.3). Codes are stored
 * only as their hash, for `CODE_TTL_SECONDS`.
 */
export interface CodeStore {
  /**
   * A new code for `record`, and the write that stores the record under the code's hash: the
   * caller sends it (with its other writes, in one batch) before handing the code out.
   */
  create(record: CodeRecord): { code: string; write: EphemeralWrite };
  /** Redeems a code: exactly one redemption across instances gets the record. One round trip. */
  redeem(code: string): Promise<CodeRedemption>;
  /**
   * Remembers what the first redemption issued; true when a replay came in meanwhile (it could
   * not know what to revoke: the caller revokes it now). One round trip.
   */
  recordIssued(code: string, issued: IssuedFromCode): Promise<boolean>;
}
