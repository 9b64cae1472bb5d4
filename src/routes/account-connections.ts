/**
 * What the account page lists of where the user is signed in: "Your applications" (each client
 * with a live refresh token family or a consent) and "Sessions" (their browser sessions, this
 * one marked), as plain values for the template.
 */
import type { UserSessionServices } from '../services-protocol.ts';
import type { SignedIn } from '../sessions/account.ts';
import { shownTime } from '../sessions/account-view.ts';

export interface ApplicationRow {
  clientId: string;
  name: string;
  since: string;
  lastUsed: string | null;
}

export interface SessionRow {
  signedIn: string;
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

export async function connectionsOf(userSessions: UserSessionServices, { user, loaded }: SignedIn): Promise<Connections> {
  const [applications, { browserSessions }] = await Promise.all([
    userSessions.listApplications(user.id),
    userSessions.listUserSessions(user.id, { currentKey: loaded.key }),
  ]);
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
      signedIn: shownTime(session.authTime ?? session.createdAt),
      methods: methodsOf(session.amr),
      current: session.current,
    })),
    otherSessions: sessions.filter((session) => !session.current).length,
  };
}
