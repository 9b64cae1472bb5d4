/**
 * "Forgot password": a one-time code of 8 digits mailed to a local account's address, good for
 * 15 minutes, once. Whatever was typed, the request does the same store work in the same order
 * and answers with a new recovery id, so neither the answer nor its time tells whether an
 * account exists; the mail leaves outside the request. A recovery is kept under the hash of its
 * id, its code only as an HMAC keyed with that id (the store never holds the id, so a copy of
 * the store cannot try the 10^8 codes). Wrong codes count on the recovery (5 void it) and on the
 * address (throttle.ts); the right one is consumed in one atomic step, on any instance.
 */
import { createHash, createHmac, randomInt } from 'node:crypto';
import { epochSeconds, type Clock } from '../../clock.ts';
import type { Audit } from '../../events/record.ts';
import type { Mailer } from '../../mail/mailer.ts';
import { passwordRecoveryMessage, type MailBrand } from '../../mail/messages.ts';
import { localAccountName } from '../../sources/local.ts';
import type { UserRecord } from '../../store/records.ts';
import type { EphemeralStore, RateCounterStore, UserRepository } from '../../store/types.ts';
import { NAMESPACES } from '../../store/types.ts';
import { sameBytes } from '../../tokens/constant-time.ts';
import { hashToken, randomToken } from '../../tokens/opaque.ts';
import type { AuthorizationRequest } from '../sign-in/authorization-request.ts';
import type { SignInThrottle } from '../throttle.ts';

export const RECOVERY_CODE_TTL_SECONDS = 15 * 60;
/** Messages one account is sent per hour at most; further requests change nothing for it. */
export const RECOVERY_MESSAGES_PER_HOUR = 5;
const HOUR = 3600;

/** A recovery as stored (under the hash of its id). */
export interface RecoveryRecord {
  /** Null when nothing was mailed (no such account, or its messages used up): no code is right. */
  userId: string | null;
  /** The per-account pointer's key this recovery answers to. */
  account: string;
  codeMac: string;
  expiresAt: number;
  /** The authorization request whose sign-in page it was asked from (or the account page's), to return to. */
  request: AuthorizationRequest | null;
  interactionId: string | null;
  returnTo?: string | null;
}

export interface PasswordRecoveryDeps {
  clock: Clock;
  ephemeral: Pick<EphemeralStore, 'get' | 'write' | 'deleteAndWrite'> & { rates: RateCounterStore };
  users: Pick<UserRepository, 'getByUsername' | 'findByEmail'>;
  throttle: Pick<SignInThrottle, 'recoveryCodeAttempt'>;
  mailer: Mailer;
  brand: MailBrand;
  /** The link of the code form, filled in (`/account/recover/code?…`). */
  codeLink(recoveryId: string, code: string): string;
}

/** Where a recovery was asked from. */
export interface RecoveryOrigin {
  request: AuthorizationRequest | null;
  interactionId: string | null;
  /** The account page's sign-in (sign-in/account-sign-in.ts): where the browser goes at the end. Absent in records made before it was kept. */
  returnTo?: string | null;
}

export type CodeCheck =
  | { ok: true; userId: string; origin: RecoveryOrigin }
  | { ok: false; problem: 'malformed' | 'wrong' | 'expired' | 'used-up' | 'throttled' };

const MAX_IDENTIFIER = 320;
const codeMac = (recoveryId: string, code: string) => createHmac('sha256', recoveryId).update(code).digest('base64url');
/** A recovery id (it is in the mailed link) with no run of 8 digits: the code is the only one in the message. */
function newRecoveryId(): string {
  for (;;) {
    const id = randomToken();
    if (!/\d{8}/.test(id)) return id;
  }
}
const newCode = () => String(randomInt(0, 100_000_000)).padStart(8, '0');
/** Who may recover here: a local account with a password and an address, not locked. */
const eligible = (user: UserRecord | undefined): user is UserRecord =>
  user !== undefined && user.source === 'local' && !!user.email && !!user.passwordHash && !user.locked;

export function createPasswordRecovery(deps: PasswordRecoveryDeps) {
  const { ephemeral } = deps;

  /** The account typed, by name or by address (an address shared by two accounts names neither). */
  async function findAccount(identifier: string): Promise<UserRecord | undefined> {
    // Both lookups every time: which one found the account must not show in the time taken.
    const [byName, byEmail] = await Promise.all([deps.users.getByUsername('local', localAccountName(identifier)), deps.users.findByEmail('local', identifier)]);
    if (eligible(byName)) return byName;
    return byEmail.length === 1 && eligible(byEmail[0]) ? byEmail[0] : undefined;
  }

  /** Starts a recovery for what was typed; the id of the code form, whatever was typed. */
  async function request(typed: string, origin: RecoveryOrigin, audit: Audit): Promise<string> {
    const identifier = typed.trim().slice(0, MAX_IDENTIFIER);
    const found = identifier === '' ? undefined : await findAccount(identifier);
    const account = found ? `user:${found.id}` : `unknown:${createHash('sha256').update(identifier.toLowerCase()).digest('base64url')}`;
    const sent = await ephemeral.rates.add(`recovery-mail:${account}`, 0, HOUR);
    const limited = sent > RECOVERY_MESSAGES_PER_HOUR;
    const user = limited ? undefined : found;
    const recoveryId = newRecoveryId();
    const key = hashToken(recoveryId);
    const code = newCode();
    // A request over the limit must not void the code last sent: its pointer goes to a key of
    // its own. So for a name without an account, or whether a previous form still takes its
    // code would tell (same reads and writes either way).
    const pointer = limited ? `limited:${key}` : account;
    const previous = await ephemeral.get<string>(NAMESPACES.passwordRecoveryCurrent, pointer);
    const record: RecoveryRecord = {
      userId: user?.id ?? null, account: pointer, codeMac: codeMac(recoveryId, code),
      expiresAt: epochSeconds(deps.clock) + RECOVERY_CODE_TTL_SECONDS, ...origin,
    };
    await ephemeral.write([
      { op: 'delete', ns: NAMESPACES.passwordRecovery, key: previous ?? hashToken(randomToken()) },
      { op: 'set', ns: NAMESPACES.passwordRecovery, key, value: record, ttlSeconds: RECOVERY_CODE_TTL_SECONDS },
      { op: 'set', ns: NAMESPACES.passwordRecoveryCurrent, key: pointer, value: key, ttlSeconds: RECOVERY_CODE_TTL_SECONDS },
    ]);
    if (user?.email) {
      const message = passwordRecoveryMessage(user.email, deps.brand, { code, link: deps.codeLink(recoveryId, code), minutes: RECOVERY_CODE_TTL_SECONDS / 60 });
      // Never awaited, never in this request's time: the mailer queues it after the answer.
      setImmediate(() => deps.mailer.send(message));
    }
    audit({ type: 'password_recovery_requested', user_id: found?.id ?? null, result: user ? 'sent' : found ? 'limited' : 'no_account' });
    return recoveryId;
  }

  /** Whether a recovery can still take its code (the link's page says so before anything is typed). */
  async function isLive(recoveryId: string): Promise<boolean> {
    if (!isRecoveryId(recoveryId)) return false;
    const record = await ephemeral.get<RecoveryRecord>(NAMESPACES.passwordRecovery, hashToken(recoveryId));
    return record !== undefined && record.expiresAt > epochSeconds(deps.clock);
  }

  /** Judges a code for a recovery; the right one is consumed (exactly once across instances). */
  async function checkCode(recoveryId: string, typed: string, address: string): Promise<CodeCheck> {
    const code = typed.replace(/[\s-]/g, '');
    if (!isRecoveryId(recoveryId) || !/^\d{8}$/.test(code)) return { ok: false, problem: 'malformed' };
    const key = hashToken(recoveryId);
    const attempt = await deps.throttle.recoveryCodeAttempt(key, address);
    if ('refused' in attempt) return { ok: false, problem: attempt.refused };
    const record = await ephemeral.get<RecoveryRecord>(NAMESPACES.passwordRecovery, key);
    if (!record || record.expiresAt <= epochSeconds(deps.clock)) {
      await attempt.giveBack();
      return { ok: false, problem: 'expired' };
    }
    const current = await ephemeral.get<string>(NAMESPACES.passwordRecoveryCurrent, record.account);
    const right = sameBytes(codeMac(recoveryId, code), record.codeMac) && current === key;
    // A wrong code keeps its attempt (the fifth voids the recovery: throttle.ts).
    if (!right || record.userId === null) return { ok: false, problem: 'wrong' };
    // The pointer is left to expire: a newer request may have moved it meanwhile.
    const consumed = await ephemeral.deleteAndWrite(NAMESPACES.passwordRecovery, key, { deleted: [], missing: [] });
    await attempt.giveBack();
    if (!consumed) return { ok: false, problem: 'expired' };
    return { ok: true, userId: record.userId, origin: { request: record.request, interactionId: record.interactionId, returnTo: record.returnTo ?? null } };
  }

  return { request, isLive, checkCode };
}

export type PasswordRecovery = ReturnType<typeof createPasswordRecovery>;

/** A recovery id as made here (randomToken: 43 characters of base64url). */
export function isRecoveryId(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}
