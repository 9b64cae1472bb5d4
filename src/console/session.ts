/**
 * The console's own session, apart from the browser session it was signed in from: kept in the
 * short-lived store under the hash of its cookie's id, it ends after 15 minutes without a request
 * and 8 hours after sign-in. Each request checks it again against what may have changed since:
 * the user locked or removed, their console roles taken away, or the browser session it came
 * from ended (signed out): any of these ends it there and then.
 */
import { epochSeconds, type Clock } from '../clock.ts';
import type { SessionStore } from '../sessions/browser-session.ts';
import { NAMESPACES, type EphemeralStore, type UserRepository } from '../store/types.ts';
import { hashToken, randomToken } from '../tokens/opaque.ts';
import { consoleRolesOf, type ConsoleRole } from './access.ts';

export interface ConsoleSessionLimits {
  idleSeconds: number;
  absoluteSeconds: number;
}

export const CONSOLE_SESSION_LIMITS: ConsoleSessionLimits = { idleSeconds: 15 * 60, absoluteSeconds: 8 * 3600 };

/** What is stored of a console session. */
export interface ConsoleSessionRecord {
  userId: string;
  /** The administrator's `sub`: what their changes are recorded under. */
  sub: string;
  /** Seconds since the epoch. */
  createdAt: number;
  lastSeenAt: number;
  /** The store key of the browser session the console was signed in from. */
  browserSessionKey: string;
}

/** The signed-in administrator of a request, as its page sees them. */
export interface ConsoleAdmin {
  /** The console session's store key (what the CSRF token is bound to). */
  key: string;
  userId: string;
  sub: string;
  /** The name to show: the user's name, else their username. */
  name: string;
  roles: ConsoleRole[];
}

export interface ConsoleSessionDeps {
  ephemeral: Pick<EphemeralStore, 'get' | 'set' | 'delete'>;
  clock: Clock;
  users: Pick<UserRepository, 'getById'>;
  sessions: Pick<SessionStore, 'listForUser'>;
  limits?: ConsoleSessionLimits;
}

export interface ConsoleSessions {
  /** A new session; returns the cookie's id (the only place it exists). */
  create(record: Omit<ConsoleSessionRecord, 'createdAt' | 'lastSeenAt'>): Promise<string>;
  /** The administrator of the cookie's session, its idle time restarted; undefined (and the session ended) when it no longer holds. */
  resume(id: string | undefined): Promise<ConsoleAdmin | undefined>;
  end(id: string | undefined): Promise<void>;
}

const usable = (id: string | undefined): id is string => id !== undefined && id !== '' && id.length <= 100;

export function createConsoleSessions(deps: ConsoleSessionDeps): ConsoleSessions {
  const limits = deps.limits ?? CONSOLE_SESSION_LIMITS;
  const now = () => epochSeconds(deps.clock);
  /** Until the idle limit, or the absolute one when that comes first. */
  const ttlOf = (record: ConsoleSessionRecord, at: number) => Math.max(1, Math.min(limits.idleSeconds, record.createdAt + limits.absoluteSeconds - at));
  const save = (key: string, record: ConsoleSessionRecord) => deps.ephemeral.set(NAMESPACES.consoleSession, key, record, ttlOf(record, record.lastSeenAt));

  async function stillHolds(key: string, record: ConsoleSessionRecord, at: number): Promise<ConsoleAdmin | undefined> {
    if (at - record.lastSeenAt > limits.idleSeconds || at - record.createdAt > limits.absoluteSeconds) return undefined;
    const user = await deps.users.getById(record.userId);
    if (!user || user.locked) return undefined;
    const roles = consoleRolesOf(user.roles);
    if (roles.length === 0) return undefined;
    const browser = await deps.sessions.listForUser(record.userId);
    if (!browser.some((loaded) => loaded.key === record.browserSessionKey)) return undefined;
    return { key, userId: user.id, sub: record.sub, name: user.name ?? user.username, roles };
  }

  return {
    async create(fields) {
      const id = randomToken();
      const at = now();
      await save(hashToken(id), { ...fields, createdAt: at, lastSeenAt: at });
      return id;
    },
    async resume(id) {
      if (!usable(id)) return undefined;
      const key = hashToken(id);
      const record = await deps.ephemeral.get<ConsoleSessionRecord>(NAMESPACES.consoleSession, key);
      if (!record) return undefined;
      const at = now();
      const admin = await stillHolds(key, record, at);
      if (!admin) {
        await deps.ephemeral.delete(NAMESPACES.consoleSession, key);
        return undefined;
      }
      await save(key, { ...record, lastSeenAt: at });
      return admin;
    },
    async end(id) {
      if (usable(id)) await deps.ephemeral.delete(NAMESPACES.consoleSession, hashToken(id));
    },
  };
}
