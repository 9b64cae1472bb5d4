/**
 * The second factor, as a user's authenticator app computes it (RFC 6238, 30 s steps), and the
 * wait that keeps a code away from the end of its step.
 */
import { createGuardrails, generate } from 'otplib';
import { sleep } from './relying-party.ts';

/** The seeded test secrets are 80 bits, below otplib's default minimum. */
const GUARDRAILS = createGuardrails({ MIN_SECRET_BYTES: 10 });

/** The RFC 6238 code of `secret` at `epochSeconds`. */
export function totp(secret: string, epochSeconds: number): Promise<string> {
  return generate({ secret, epoch: epochSeconds, guardrails: GUARDRAILS });
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Waits, when needed, until at least `margin` seconds remain in the current 30 s step, so that a
 * code computed now for a neighbouring step is still in the server's window when it arrives.
 */
export async function awayFromStepEnd(margin = 6): Promise<void> {
  const intoStep = (Date.now() / 1000) % 30;
  if (intoStep > 30 - margin) await sleep((30 - intoStep) * 1000 + 300);
}
