/**
 * Authenticator-app codes (RFC 6238: SHA-1, 30 s, 6 digits) with one step of clock drift either
 * way. A code is accepted once only: its time step is claimed per user in the shared ephemeral
 * store, so a replay is refused within its window, on any instance.
 */
import { createGuardrails, generateSecret, generateURI, verify } from 'otplib';
import type { EphemeralStore } from '../store/types.ts';

const PERIOD_SECONDS = 30;
/** One period either way: a phone a little fast or slow, or a code typed as it turned over. */
const DRIFT_SECONDS = PERIOD_SECONDS;
/**
 * RFC 4226 §4 asks for at least 128 bits and we generate 160, but secrets enrolled elsewhere and
 * seeded by administrators are often 80 bits (16 base32 characters, as in the README's seed file example):
 * those must keep working.
 */
const GUARDRAILS = createGuardrails({ MIN_SECRET_BYTES: 10 });

export function newTotpSecret(): string {
  return generateSecret();
}

/** The otpauth:// URI an authenticator app reads from the QR code. */
export function totpUri(issuer: string, account: string, secret: string): string {
  return generateURI({ issuer, label: account, secret });
}

/** Whether `code` is valid now for `secret` and was not used before (then it is used up). */
export async function acceptTotp(ephemeral: Pick<EphemeralStore, 'usedTotpCodes'>, userId: string, secret: string, code: string, nowSeconds: number): Promise<boolean> {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return false;
  let result: Awaited<ReturnType<typeof verify>>;
  try {
    result = await verify({ secret, token, epoch: nowSeconds, epochTolerance: DRIFT_SECONDS, guardrails: GUARDRAILS });
  } catch {
    return false;
  }
  if (!result.valid || !('timeStep' in result)) return false;
  // Kept past the drift window, so the same step can never be claimed twice.
  return ephemeral.usedTotpCodes.claim(userId, result.timeStep, 4 * PERIOD_SECONDS);
}
