/**
 * The account page's signed-in user, without HTTP: who the browser session belongs to (a
 * complete sign-in, nothing owed), the CSRF token of the page's forms, whether the sign-in is
 * recent enough for a security change.
 */
import type { Clock } from '../../clock.ts';
import { epochSeconds } from '../../clock.ts';
import type { UserRecord } from '../../store/records.ts';
import type { UserRepository } from '../../store/types.ts';
import type { Keyring } from '../../tokens/secret-box.ts';
import type { LoadedSession, SessionStore } from '../browser-session.ts';
import { isValidSessionCsrfToken, sessionCsrfToken } from '../csrf.ts';
import { owedStep } from '../sign-in/steps.ts';

/** A password or second-factor change needs a sign-in at most this long ago (then it is asked again). */
export const RECENT_SIGN_IN_SECONDS = 5 * 60;

const CSRF_PURPOSE = 'account';

/** The browser session of a signed-in user, and that user as stored now. */
export interface SignedIn {
  loaded: LoadedSession & { session: { userId: string; authTime: number } };
  user: UserRecord;
}

export interface AccountBaseDeps {
  clock: Clock;
  sessions: Pick<SessionStore, 'load'>;
  /** Read from the database, not a cache: the page shows what was just changed. */
  users: Pick<UserRepository, 'getById'>;
  /** The 'cookies' keyring: the forms' CSRF tokens are keyed with it. */
  csrfKey: Keyring;
}

export function createAccountBase(deps: AccountBaseDeps) {
  const now = () => epochSeconds(deps.clock);
  return {
    now,
    /** The session's user, when the session is a complete sign-in (else the sign-in pages come first). */
    async signedIn(sessionId: string | undefined): Promise<SignedIn | undefined> {
      const loaded = await deps.sessions.load(sessionId);
      const { userId, authTime } = loaded?.session ?? {};
      if (!loaded || !userId || authTime === null || authTime === undefined) return undefined;
      const user = await deps.users.getById(userId);
      if (!user || user.locked || owedStep(user, loaded.session.amr) !== undefined) return undefined;
      return { loaded: { key: loaded.key, session: { ...loaded.session, userId, authTime } }, user };
    },
    /** Bound to the browser session (a new sign-in makes a new one) and to the account page. */
    csrfToken: ({ loaded }: SignedIn) => sessionCsrfToken(deps.csrfKey, loaded.key, CSRF_PURPOSE),
    validCsrf: ({ loaded }: SignedIn, token: string | undefined) => isValidSessionCsrfToken(deps.csrfKey, loaded.key, CSRF_PURPOSE, token),
    /** Whether the sign-in is recent enough for a security change. */
    isRecent: ({ loaded }: SignedIn) => now() - loaded.session.authTime <= RECENT_SIGN_IN_SECONDS,
  };
}

export type AccountBase = ReturnType<typeof createAccountBase>;
