/**
 * Browser sessions in the ephemeral store (shared by every instance). The cookie holds only a
 * random 256-bit id; the store keys the session by the id's SHA-256. The id changes at sign-in.
 */
import type { Clock } from '../clock.ts';
import { epochSeconds } from '../clock.ts';
import type { EphemeralStore } from '../store/types.ts';
import { hashToken, randomToken } from '../tokens/opaque.ts';

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
}

export interface LoadedSession {
  /** The store key (hash of the cookie's id): what interactions are bound to. */
  key: string;
  session: BrowserSession;
}

/** A browser session lasts at most this long after it was last written. */
export const SESSION_TTL_SECONDS = 12 * 3600;
const NS = 'session';

export interface SessionStore {
  load(sid: string | undefined): Promise<LoadedSession | undefined>;
  /** Starts an anonymous session; returns the cookie value with the stored session. */
  start(): Promise<LoadedSession & { sid: string }>;
  /** Replaces the session under a new id (sign-in), deleting the old one (no fixation). */
  rotate(oldKey: string | undefined, session: BrowserSession): Promise<LoadedSession & { sid: string }>;
  save(key: string, session: BrowserSession): Promise<void>;
  destroy(key: string): Promise<void>;
}

export function createSessionStore(ephemeral: EphemeralStore, clock: Clock): SessionStore {
  const write = async (session: BrowserSession) => {
    const sid = randomToken();
    const key = hashToken(sid);
    await ephemeral.set(NS, key, session, SESSION_TTL_SECONDS);
    return { sid, key, session };
  };
  return {
    async load(sid) {
      if (!sid || sid.length > 100) return undefined;
      const key = hashToken(sid);
      const session = await ephemeral.get<BrowserSession>(NS, key);
      return session ? { key, session } : undefined;
    },
    start: () => write({ userId: null, authTime: null, amr: [], clients: [], createdAt: epochSeconds(clock) }),
    async rotate(oldKey, session) {
      if (oldKey) await ephemeral.delete(NS, oldKey);
      return write(session);
    },
    save: (key, session) => ephemeral.set(NS, key, session, SESSION_TTL_SECONDS),
    destroy: (key) => ephemeral.delete(NS, key),
  };
}
