/**
 * Browser sessions in the ephemeral store (shared by every instance). The cookie holds only a
 * random 256-bit id; the store keys the session by the id's SHA-256. The id changes at sign-in.
 * A visitor who has not signed in gets the cookie but nothing in the store: the id's hash is
 * still what their interactions are bound to, so an anonymous request costs no lasting state.
 * Each user's sessions are listed in an index (one key per user, each session expiring in it
 * with the session), written in the same batch as the session; a session is named outside by
 * its public id, derived one way from its key.
 */
import type { Clock } from '../clock.ts';
import { epochSeconds } from '../clock.ts';
import type { EphemeralStore, EphemeralWrite } from '../store/types.ts';
import { NAMESPACES } from '../store/types.ts';
import { hashToken, randomToken } from '../tokens/opaque.ts';

/** A session's name in lists and requests to end it: neither its cookie's id nor its store key. */
export function publicSessionId(key: string): string {
  return hashToken(`public-session-id:${key}`).slice(0, 22);
}

export interface BrowserSession {
  /** The signed-in user's internal id; null before sign-in. */
  userId: string | null;
  /** Seconds since the epoch of the last sign-in. */
  authTime: number | null;
  amr: string[];
  /** Clients that received a code in this session: end session revokes their tokens. */
  clients: string[];
  createdAt: number;
  /** The upstream provider's ID token, when the user came from one: sign-out continues there. */
  upstreamIdToken?: string | undefined;
  /** Where the sign-in came from, for the account page's list (absent in sessions stored before it was kept). */
  device?: { userAgent: string; address: string } | undefined;
  /** Seconds since the epoch of the last write of the session (a sign-in, a code issued, a change). */
  lastSeenAt?: number | undefined;
}

export interface LoadedSession {
  /** The store key (hash of the cookie's id): what interactions are bound to. */
  key: string;
  session: BrowserSession;
}

/** A browser session lasts at most this long after it was last written. */
export const SESSION_TTL_SECONDS = 12 * 3600;

/** A session under a new id, with the writes that store it (for the caller to send, batched). */
export type NewSession = LoadedSession & { sid: string; writes: EphemeralWrite[] };

export interface SessionStore {
  /** The stored session of the cookie's id; undefined for none (or an anonymous visitor). */
  load(sid: string | undefined): Promise<LoadedSession | undefined>;
  /**
   * The browser's session: the stored one, else an anonymous one under the cookie's id (never
   * stored); undefined only when the browser sent no usable id.
   */
  loadBrowser(sid: string | undefined): Promise<LoadedSession | undefined>;
  /** An anonymous session under a new id; nothing to store (a session is written at sign-in). */
  create(): LoadedSession & { sid: string };
  /** The session under a new id (sign-in), replacing `old` if stored (no fixation); not yet written. */
  rotation(old: LoadedSession | undefined, session: BrowserSession): NewSession;
  /** The writes that store a session (and keep its user's index), for the caller's batch. */
  saveWrites(key: string, session: BrowserSession): EphemeralWrite[];
  save(key: string, session: BrowserSession): Promise<void>;
  /** Ends a session, and takes it out of its user's index. */
  destroy(key: string, userId: string | null): Promise<void>;
  /** A user's live sessions, oldest expiry first. */
  listForUser(userId: string): Promise<LoadedSession[]>;
}

/** The writes that store a session, stamped with `now` as its last activity. */
function saveWrites(key: string, session: BrowserSession, now: number): EphemeralWrite[] {
  const value = session.userId === null ? session : { ...session, lastSeenAt: now };
  const set: EphemeralWrite = { op: 'set', ns: NAMESPACES.session, key, value, ttlSeconds: SESSION_TTL_SECONDS };
  if (session.userId === null) return [set];
  return [set, { op: 'index', ns: NAMESPACES.userSessions, key: session.userId, member: key, ttlSeconds: SESSION_TTL_SECONDS }];
}

function destroyWrites(key: string, userId: string | null): EphemeralWrite[] {
  const unindex: EphemeralWrite[] = userId === null ? [] : [{ op: 'unindex', ns: NAMESPACES.userSessions, key: userId, member: key }];
  return [{ op: 'delete', ns: NAMESPACES.session, key }, ...unindex];
}

export function createSessionStore(ephemeral: EphemeralStore, clock: Clock): SessionStore {
  const writesOf = (key: string, session: BrowserSession) => saveWrites(key, session, epochSeconds(clock));
  const underNewId = (session: BrowserSession, before: EphemeralWrite[]): NewSession => {
    const sid = randomToken();
    const key = hashToken(sid);
    return { sid, key, session, writes: [...before, ...writesOf(key, session)] };
  };
  const anonymous = (): BrowserSession => ({ userId: null, authTime: null, amr: [], clients: [], createdAt: epochSeconds(clock) });
  const usable = (sid: string | undefined): sid is string => sid !== undefined && sid !== '' && sid.length <= 100;
  const stored = async (key: string): Promise<LoadedSession | undefined> => {
    const session = await ephemeral.get<BrowserSession>(NAMESPACES.session, key);
    return session ? { key, session } : undefined;
  };
  return {
    load: async (sid) => (usable(sid) ? stored(hashToken(sid)) : undefined),
    async loadBrowser(sid) {
      if (!usable(sid)) return undefined;
      const key = hashToken(sid);
      return (await stored(key)) ?? { key, session: anonymous() };
    },
    create() {
      const sid = randomToken();
      return { sid, key: hashToken(sid), session: anonymous() };
    },
    // An anonymous visitor's session was never stored: nothing to delete.
    rotation: (old, session) => underNewId(session, old && old.session.userId !== null ? destroyWrites(old.key, old.session.userId) : []),
    saveWrites: writesOf,
    save: (key, session) => ephemeral.write(writesOf(key, session)),
    destroy: (key, userId) => ephemeral.write(destroyWrites(key, userId)),
    async listForUser(userId) {
      const keys = await ephemeral.indexed(NAMESPACES.userSessions, userId);
      // One read per session: each is its own key (its own hash slot on a cluster).
      const found = await Promise.all(keys.map(stored));
      // A member whose session is gone is skipped, not removed: on a cluster a new session's
      // index entry can land just before the session itself. It expires with the session.
      return found.filter((loaded): loaded is LoadedSession => loaded?.session.userId === userId);
    },
  };
}
