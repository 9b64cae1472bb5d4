/**
 * A user's sessions: their refresh token families and their browser sessions, listed and ended
 * (the administration API, the account page, and a password recovery all end them through these
 * functions). Ending a session also ends what it let anyone obtain: a family's tokens, and for a
 * browser session the tokens of the clients signed in to in it, as signing out does.
 *
 * What ending writes to the database (the revocation of families and tokens) is written in one
 * transaction with the events that record it (events/in-transaction.ts); once it committed, the
 * revocations are checked here at once, and then the browser sessions, which live in the
 * short-lived store only, are destroyed.
 */
import type { Clock } from '../clock.ts';
import type { AuditEvent } from '../events/audit-events.ts';
import { recordedTransaction, type ChangeRecorder } from '../events/in-transaction.ts';
import { publicSessionId, type LoadedSession, type SessionStore } from '../sessions/browser-session.ts';
import { revokeUserClientTokens, type ClientTokenRevocationDeps } from '../sessions/end-session.ts';
import type { DurableStore, RefreshTokenRepository, UserRefreshFamily, UserRepository } from '../store/types.ts';
import { revokedFamilyTokens, revocationsInTransaction, type RevocationList, type RevocationsInTransaction } from '../tokens/revocation-list.ts';
import { AdminError } from './errors.ts';

export interface UserSessionsDeps extends ClientTokenRevocationDeps {
  clock: Clock;
  users: Pick<UserRepository, 'getById'>;
  sessions: Pick<SessionStore, 'listForUser' | 'destroy'>;
  refreshTokens: Pick<RefreshTokenRepository, 'listForUser' | 'get' | 'revokeFamily' | 'revokeForUserAndClient'>;
  revocations: Pick<RevocationList, 'revoke' | 'revokeUser' | 'recorded'>;
  durable: Pick<DurableStore, 'transaction'>;
}

/** How an ending is recorded: where its events are logged once committed, and what they are, from what ended. */
export interface Recording<T> {
  recorder: ChangeRecorder;
  eventsOf(ended: T): readonly AuditEvent[];
}

/** What revokes a user's tokens inside an ending's transaction. */
export type TokensInTransaction = ClientTokenRevocationDeps & { tx: DurableStore; revocations: RevocationsInTransaction };

/**
 * Runs `write` (the database part of an ending) in one transaction with the events `recording`
 * makes of its outcome; once committed, hands its revocations to the revocation list.
 */
export async function recordedEnding<T>(
  deps: Pick<UserSessionsDeps, 'clock' | 'durable' | 'revocations'>,
  recording: Recording<T>,
  write: (tokens: TokensInTransaction) => Promise<T>,
): Promise<T> {
  const { ended, written } = await recordedTransaction(deps.durable, deps.clock, recording.recorder, async (tx) => {
    const revocations = revocationsInTransaction(tx, deps.clock);
    const tokens = { tx, clock: deps.clock, refreshTokens: tx.refreshTokens, accessTokens: tx.accessTokens, revocations };
    const ended = await write(tokens);
    return { result: { ended, written: revocations.written }, events: recording.eventsOf(ended) };
  });
  if (written.length > 0) await deps.revocations.recorded(written);
  return ended;
}

/** A browser session as listed: `id` is its public id (never its cookie's id or its store key). */
export interface BrowserSessionView {
  id: string;
  createdAt: Date;
  authTime: Date | null;
  amr: string[];
  /** Clients that received a code in this session. */
  clients: string[];
  /** Whether it is the session of the key given to the list (the caller's own). */
  current: boolean;
  /** The User-Agent and source address of its sign-in; null for sessions stored before they were kept. */
  userAgent: string | null;
  address: string | null;
  /** Its last activity (a sign-in, a code issued through it, a change); null as above. */
  lastSeenAt: Date | null;
}

export interface UserSessions {
  refreshTokenFamilies: UserRefreshFamily[];
  browserSessions: BrowserSessionView[];
}

const fromSeconds = (seconds: number) => new Date(seconds * 1000);

async function existingUser(deps: Pick<UserSessionsDeps, 'users'>, userId: string): Promise<void> {
  if (!(await deps.users.getById(userId))) throw new AdminError('not_found', `no user with id ${userId}`);
}

/** A user's live families and browser sessions; `currentKey` (a session's store key) marks the caller's own. */
export async function listUserSessions(
  deps: Pick<UserSessionsDeps, 'clock' | 'users' | 'sessions' | 'refreshTokens'>,
  userId: string,
  options: { currentKey?: string | undefined } = {},
): Promise<UserSessions> {
  await existingUser(deps, userId);
  const [families, sessions] = await Promise.all([
    deps.refreshTokens.listForUser(userId, new Date(deps.clock())),
    deps.sessions.listForUser(userId),
  ]);
  return {
    refreshTokenFamilies: families,
    browserSessions: sessions.map(({ key, session }) => ({
      id: publicSessionId(key),
      createdAt: fromSeconds(session.createdAt),
      authTime: session.authTime === null ? null : fromSeconds(session.authTime),
      amr: session.amr,
      clients: session.clients,
      current: key === options.currentKey,
      userAgent: session.device?.userAgent ?? null,
      address: session.device?.address ?? null,
      lastSeenAt: session.lastSeenAt === undefined ? null : fromSeconds(session.lastSeenAt),
    })),
  };
}

export type EndedSessions = { browserSessions: number; refreshTokenFamilies: number };

/** Ends every browser session of the user and revokes every family and access token of theirs. */
export async function endUserSessions(deps: UserSessionsDeps, userId: string, recording: Recording<EndedSessions>): Promise<EndedSessions> {
  await existingUser(deps, userId);
  const [families, sessions] = await Promise.all([
    deps.refreshTokens.listForUser(userId, new Date(deps.clock())),
    deps.sessions.listForUser(userId),
  ]);
  const ended = await recordedEnding(deps, recording, async ({ revocations }) => {
    await revocations.revokeUser(userId, 'sessions ended');
    return { browserSessions: sessions.length, refreshTokenFamilies: families.length };
  });
  await Promise.all(sessions.map(({ key }) => deps.sessions.destroy(key, userId)));
  return ended;
}

/**
 * Ends one session of the user, by a family's id or a browser session's public id, and revokes
 * its tokens; `not_found` when the user has no such live session.
 */
export type EndedSession = { kind: 'refresh_token_family' | 'browser_session' };

export async function endUserSession(deps: UserSessionsDeps, userId: string, sessionId: string, recording: Recording<EndedSession>): Promise<EndedSession> {
  await existingUser(deps, userId);
  const family = await deps.refreshTokens.get(sessionId);
  if (family && family.userId === userId && family.revokedAt === null) {
    return recordedEnding(deps, recording, async ({ tx, revocations }) => {
      const revoked = await tx.refreshTokens.revokeFamily(sessionId, 'session ended', new Date(deps.clock()));
      await revocations.revoke(revokedFamilyTokens(revoked));
      return { kind: 'refresh_token_family' as const };
    });
  }
  const browser = (await deps.sessions.listForUser(userId)).find(({ key }) => publicSessionId(key) === sessionId);
  if (!browser) throw new AdminError('not_found', `user ${userId} has no session ${sessionId}`);
  const ended = await recordedEnding(deps, recording, async (tokens) => {
    await revokeBrowserSessionTokens(tokens, userId, browser);
    return { kind: 'browser_session' as const };
  });
  await deps.sessions.destroy(browser.key, userId);
  return ended;
}

/**
 * Revokes what a browser session let anyone obtain, as signing out does: the user's tokens at
 * each client signed in to in it. Tokens are held per user and client, not per browser, so another
 * browser's tokens at one of those clients end too (its session stays and gets new ones).
 */
async function revokeBrowserSessionTokens(tokens: ClientTokenRevocationDeps, userId: string, browser: LoadedSession): Promise<void> {
  await revokeUserClientTokens(tokens, userId, browser.session.clients, 'session ended');
}

/** The user's browser sessions but the one of `exceptKey` (a session's store key; none kept when undefined). */
async function otherBrowserSessions(deps: Pick<UserSessionsDeps, 'sessions'>, userId: string, exceptKey: string | undefined): Promise<LoadedSession[]> {
  return (await deps.sessions.listForUser(userId)).filter(({ key }) => key !== exceptKey);
}

/**
 * Ends the user's browser sessions but the one of `exceptKey`, each with its tokens as
 * `endUserSession` ends one (a stolen laptop's applications are signed out too); returns how
 * many ended.
 */
export async function endOtherBrowserSessions(deps: UserSessionsDeps, userId: string, exceptKey: string | undefined, recording: Recording<number>): Promise<number> {
  const others = await otherBrowserSessions(deps, userId, exceptKey);
  const ended = await recordedEnding(deps, recording, async (tokens) => {
    for (const browser of others) await revokeBrowserSessionTokens(tokens, userId, browser);
    return others.length;
  });
  await Promise.all(others.map(({ key }) => deps.sessions.destroy(key, userId)));
  return ended;
}

/**
 * Ends the user's browser sessions but the one of `exceptKey`, after a new password: its change
 * revoked every token of the user already, so only the sessions are left to end.
 */
export async function endOtherBrowserSessionsAfterPasswordChange(deps: Pick<UserSessionsDeps, 'sessions'>, userId: string, exceptKey: string): Promise<number> {
  const others = await otherBrowserSessions(deps, userId, exceptKey);
  await Promise.all(others.map(({ key }) => deps.sessions.destroy(key, userId)));
  return others.length;
}
