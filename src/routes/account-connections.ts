/**
 * What the account page lists of where the user is signed in: "Your applications" (each client
 * with a live refresh token family or a consent) and "Sessions" (their browser sessions, this
 * one first, each with the browser and system its User-Agent names, its address and times), as
 * plain values for the template.
 */
import Bowser from 'bowser';
import type { UserSessionServices } from '../composition/protocol.ts';
import type { SignedIn } from '../sessions/account/signed-in.ts';
import { readableTime, type ReadableTime } from '../sessions/account/readable-time.ts';

export interface ApplicationRow {
  clientId: string;
  name: string;
  since: ReadableTime;
  lastUsed: ReadableTime | null;
}

export interface SessionRow {
  /** The public id that "Sign out" names. */
  id: string;
  /** "Chrome on Linux", or "Unknown browser". */
  device: string;
  address: string | null;
  signedIn: ReadableTime;
  lastActive: ReadableTime | null;
  /** How: password, and the second factor when one was used. */
  methods: string;
  current: boolean;
}

export interface Connections {
  applications: ApplicationRow[];
  sessions: SessionRow[];
  otherSessions: number;
}

function methodsOf(amr: readonly string[]): string {
  if (amr.includes('external')) return 'through the sign-in provider';
  return amr.includes('mfa') ? 'with password and second factor' : 'with password';
}

/** The browser and system a User-Agent names, as people call them (bowser's names). */
export function deviceOf(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const { browser, os } = Bowser.parse(userAgent);
  const name = browser.name || 'Unknown browser';
  return os.name ? `${name} on ${os.name}` : name;
}

/** `now`: seconds since the epoch, that times are read at. */
export async function connectionsOf(userSessions: UserSessionServices, { user, loaded }: SignedIn, now: number): Promise<Connections> {
  const [applications, { browserSessions }] = await Promise.all([
    userSessions.listApplications(user.id),
    userSessions.listUserSessions(user.id, { currentKey: loaded.key }),
  ]);
  const shownTime = (at: Date) => readableTime(at, now);
  // This browser first, then the latest sign-ins.
  const sessions = [...browserSessions].sort((a, b) => Number(b.current) - Number(a.current) || (b.authTime?.getTime() ?? 0) - (a.authTime?.getTime() ?? 0));
  return {
    applications: applications.map((app) => ({
      clientId: app.clientId,
      name: app.displayName || app.clientId,
      since: shownTime(app.since),
      lastUsed: app.lastUsedAt && shownTime(app.lastUsedAt),
    })),
    sessions: sessions.map((session) => ({
      id: session.id,
      device: deviceOf(session.userAgent),
      address: session.address,
      signedIn: shownTime(session.authTime ?? session.createdAt),
      lastActive: session.lastSeenAt && shownTime(session.lastSeenAt),
      methods: methodsOf(session.amr),
      current: session.current,
    })),
    otherSessions: sessions.filter((session) => !session.current).length,
  };
}
