/**
 * Authorization codes on either backend: a code is 256 random bits, stored only as its SHA-256
 * (the form of tokens/opaque.ts) under `NAMESPACES.code` for five minutes. Creating one is the
 * same everywhere; each backend supplies the two steps that must be atomic (`CodeSteps`).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { CodeRecord, IssuedFromCode } from '../records.ts';
import type { CodeRedemption, CodeStore, EphemeralWrite } from '../types.ts';
import { NAMESPACES } from './namespaces.ts';

/** RFC 6749 §4.1.2 recommends at most 10 minutes; a code here is valid for 5. */
export const CODE_TTL_SECONDS = 300;

/** The key a code's record is kept under (and what it issued, and a replay's mark). */
export function codeKey(code: string): string {
  return createHash('sha256').update(code).digest('base64url');
}

/** A new code, with the write that stores its record under the code's hash (for the caller to send). */
export function createCode(record: CodeRecord): { code: string; write: EphemeralWrite } {
  const code = randomBytes(32).toString('base64url');
  return { code, write: { op: 'set', ns: NAMESPACES.code, key: codeKey(code), value: record, ttlSeconds: CODE_TTL_SECONDS } };
}

/** What a backend does atomically, by the code's key. */
export interface CodeSteps {
  /**
   * Marks the code used and returns its record, the first time; afterwards returns what the
   * first redemption issued, or, while it has recorded nothing yet, leaves a mark that a replay
   * came in.
   */
  redeem(key: string): Promise<CodeRedemption>;
  /** Keeps what the first redemption issued; true when a replay left its mark before. */
  recordIssued(key: string, issued: IssuedFromCode): Promise<boolean>;
}

export function createCodeStore(steps: CodeSteps): CodeStore {
  return {
    create: createCode,
    redeem: (code) => steps.redeem(codeKey(code)),
    recordIssued: (code, issued) => steps.recordIssued(codeKey(code), issued),
  };
}
