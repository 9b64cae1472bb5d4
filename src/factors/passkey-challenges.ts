/**
 * What the passkey ceremonies share: the challenge a browser asked for, kept under a key made
 * from that browser (its session key) and the ceremony (an interaction, say), hashed so that the
 * session key is never written as it is; the credential descriptors of options; and the one
 * reading of a browser's posted answer.
 */
import type { FactorRecord } from '../store/records.ts';
import { hashToken } from '../tokens/opaque.ts';

export const CHALLENGE_TTL_SECONDS = 5 * 60;
/** A browser's answer is a few hundred bytes; anything far bigger is not one. */
const MAX_RESPONSE_LENGTH = 16 * 1024;

/** Who asked for a challenge: the browser session's key and the ceremony (an interaction id, say). */
export interface Binding {
  sessionKey: string;
  ceremony: string;
}

export interface StoredChallenge {
  purpose: 'register' | 'authenticate';
  userId: string;
  challenge: string;
}

/** The store key of a binding's challenge: hashed, so the session key is not written as it is. */
export const challengeKey = (binding: Binding, purpose: StoredChallenge['purpose']) => hashToken(`${purpose}\n${binding.sessionKey}\n${binding.ceremony}`);

export const descriptor = (factor: FactorRecord) => ({ id: factor.passkey?.credentialId ?? '', transports: factor.passkey?.transports as never });

/** A posted JSON answer, or undefined when it is not an object of a sane size. */
export function parseResponse<T>(text: string): T | undefined {
  if (text.length === 0 || text.length > MAX_RESPONSE_LENGTH) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}
