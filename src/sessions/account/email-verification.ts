/**
 * "Verify email" on the account page: a one-time code of 8 digits mailed to the user's address,
 * good for 15 minutes and once; 5 tries void it, a new request voids the previous code, and at
 * most 5 messages go out per user per hour. Entering it sets `email_verified`, for the address
 * the code was sent to only. The store keeps the code's hash, never the code.
 */
import { randomInt } from 'node:crypto';
import type { Mailer } from '../../mail/mailer.ts';
import { emailVerificationMessage, type MailBrand } from '../../mail/messages.ts';
import type { UserRecord } from '../../store/records.ts';
import { NAMESPACES, type EphemeralStore, type UserRepository } from '../../store/types.ts';
import { sameBytes } from '../../tokens/constant-time.ts';
import { hashToken, randomToken } from '../../tokens/opaque.ts';

const CODE_SECONDS = 15 * 60;
const MAX_TRIES = 5;
const MAX_MESSAGES_PER_HOUR = 5;

interface PendingCode {
  email: string;
  codeHash: string;
  /** This code's own: its tries are counted under it (a new code starts again at none). */
  id: string;
}

export interface EmailVerificationDeps {
  ephemeral: Pick<EphemeralStore, 'get' | 'set' | 'delete' | 'deleteAndWrite' | 'rates'>;
  users: Pick<UserRepository, 'update'>;
  mailer: Mailer;
  brand: MailBrand;
  now(): number;
  /** The page the mailed link opens, with the code filled in (opening it consumes nothing). */
  linkFor(code: string): string;
}

export type SendResult = 'sent' | 'no-email' | 'verified-already' | 'too-many' | 'no-mail';
export type VerifyResult = 'verified' | 'wrong' | 'none';

/** What `code` must look like to be tried (spaces aside). */
export const EMAIL_CODE = /^\d{8}$/;

export function createEmailVerification(deps: EmailVerificationDeps) {
  const { ephemeral } = deps;

  async function send(user: UserRecord): Promise<SendResult> {
    if (!user.email) return 'no-email';
    if (user.emailVerified) return 'verified-already';
    if (!deps.mailer.available) return 'no-mail';
    const hour = Math.floor(deps.now() / 3600);
    if ((await ephemeral.rates.add(`email-verification-sent:${user.id}`, hour, 3600)) > MAX_MESSAGES_PER_HOUR) return 'too-many';
    const code = String(randomInt(0, 100_000_000)).padStart(8, '0');
    const pending: PendingCode = { email: user.email, codeHash: hashToken(code), id: randomToken(12) };
    // Replaces the previous code, which no longer works.
    await ephemeral.set(NAMESPACES.emailVerification, user.id, pending, CODE_SECONDS);
    deps.mailer.send(emailVerificationMessage(user.email, deps.brand, { code, link: deps.linkFor(code), minutes: CODE_SECONDS / 60 }));
    return 'sent';
  }

  async function verify(user: UserRecord, typed: string): Promise<VerifyResult> {
    const pending = await ephemeral.get<PendingCode>(NAMESPACES.emailVerification, user.id);
    if (!pending || pending.email !== user.email) return 'none';
    // Every try counts before the code is compared, so parallel guesses cannot pass the limit.
    const tries = await ephemeral.rates.add(`email-verification-tries:${pending.id}`, 0, CODE_SECONDS);
    if (tries > MAX_TRIES) {
      await ephemeral.delete(NAMESPACES.emailVerification, user.id);
      return 'none';
    }
    const code = typed.replace(/\s+/g, '');
    if (!EMAIL_CODE.test(code) || !sameBytes(hashToken(code), pending.codeHash)) {
      if (tries === MAX_TRIES) await ephemeral.delete(NAMESPACES.emailVerification, user.id);
      return 'wrong';
    }
    // Once: of two entries of the code at once, the one that deletes it verifies.
    if (!(await ephemeral.deleteAndWrite(NAMESPACES.emailVerification, user.id, { deleted: [], missing: [] }))) return 'none';
    await deps.users.update(user.id, { emailVerified: true });
    return 'verified';
  }

  return { send, verify };
}

export type EmailVerification = ReturnType<typeof createEmailVerification>;
