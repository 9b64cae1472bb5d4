/**
 * Signing in to the console: the authorization code flow with PKCE S256 against this service's
 * own authorization endpoint, as the built-in console client (built-in-client.ts). `start` keeps
 * the round trip's state, nonce and code verifier in the short-lived store (bound to the browser
 * by a cookie holding the state); `finish` takes them back once, redeems the code by calling the
 * grant in this process (never HTTP to itself), and checks the ID token's claims: issuer,
 * audience, nonce, a second factor (`amr` `mfa`) and a console role. The browser session it
 * came from is the code's (the one that signed in), not a cookie's: on the management port the
 * public origin's cookie is not sent.
 */
import { epochSeconds, type Clock } from '../clock.ts';
import { OAuthError } from '../errors.ts';
import type { Audit } from '../events/record.ts';
import { createAuthorizationCodeGrant, type AuthorizationCodeDeps } from '../grants/authorization-code.ts';
import type { SessionStore } from '../sessions/browser-session.ts';
import { NAMESPACES, type EphemeralStore } from '../store/types.ts';
import { verifyJwt } from '../tokens/jwt.ts';
import { hashToken, randomToken } from '../tokens/opaque.ts';
import { s256Challenge } from '../tokens/pkce.ts';
import { consoleRolesOf } from './access.ts';
import { CONSOLE_CLIENT_ID, CONSOLE_SCOPES, consoleCallbackUrl, consoleClient } from './built-in-client.ts';
import type { ConsoleSessions } from './session.ts';

/** A sign-in round trip lasts at most this long (the sign-in pages take their time). */
const ROUND_TRIP_SECONDS = 15 * 60;

interface RoundTrip {
  verifier: string;
  nonce: string;
  /** A path of the console, to go back to once signed in. */
  returnTo: string;
}

export interface ConsoleSignInDeps extends Omit<AuthorizationCodeDeps, 'accessTokens'> {
  /** The service's base URL: its authorization endpoint is under it. */
  baseUrl: string;
  /** Where the console is served (its /admin under it): the base URL, or the management origin. */
  consoleUrl: string;
  /** The path of `consoleUrl`: what a page of the console starts with. */
  basePath: string;
  ephemeral: Pick<EphemeralStore, 'set' | 'get' | 'deleteAndWrite'>;
  clock: Clock;
  browserSessions: Pick<SessionStore, 'listForUser'>;
  consoleSessions: ConsoleSessions;
}

export type SignInOutcome =
  | { kind: 'signed-in'; sessionId: string; returnTo: string }
  /** Signed in, but not with a second factor: the console is not entered this way. */
  | { kind: 'no-mfa' }
  /** Signed in, without a console role. */
  | { kind: 'forbidden' }
  /** The round trip is not this browser's, was used, expired, or the provider refused. */
  | { kind: 'failed'; reason: string };

export interface ConsoleSignIn {
  /** Where to send the browser, and the state its cookie is to hold. */
  start(returnTo: string): Promise<{ state: string; location: string }>;
  finish(input: { query: Record<string, string | undefined>; cookieState: string | undefined; audit: Audit }): Promise<SignInOutcome>;
}

/** A path of the console to come back to (of a bounded length); else the overview. */
const consolePath = (basePath: string, returnTo: string) =>
  returnTo.startsWith(`${basePath}/admin`) && !returnTo.startsWith('//') && returnTo.length <= 2000 ? returnTo : `${basePath}/admin`;

export function createConsoleSignIn(deps: ConsoleSignInDeps): ConsoleSignIn {
  const client = consoleClient(deps.consoleUrl);
  const redirectUri = consoleCallbackUrl(deps.consoleUrl);

  /** A grant for one redemption that keeps the redeemed code's browser session key. */
  function grantKeepingSession() {
    const kept: { browserSessionKey?: string | undefined } = {};
    const codes: AuthorizationCodeDeps['codes'] = {
      redeem: async (code) => {
        const redemption = await deps.codes.redeem(code);
        if (redemption.outcome === 'redeemed') kept.browserSessionKey = redemption.record.browserSessionKey;
        return redemption;
      },
      recordIssued: (code, issued) => deps.codes.recordIssued(code, issued),
    };
    // The console's token is never used, only read here: nothing is recorded of it (it names no row of `clients`).
    return { kept, grant: createAuthorizationCodeGrant({ ...deps, codes, accessTokens: { record: async () => {} } }) };
  }

  async function takeRoundTrip(state: string | undefined, cookieState: string | undefined): Promise<RoundTrip | undefined> {
    if (!state || state !== cookieState || state.length > 100) return undefined;
    const key = hashToken(state);
    const trip = await deps.ephemeral.get<RoundTrip>(NAMESPACES.consoleSignIn, key);
    // Taken once: of two callbacks with the same state, one goes on.
    if (!trip || !(await deps.ephemeral.deleteAndWrite(NAMESPACES.consoleSignIn, key, { deleted: [], missing: [] }))) return undefined;
    return trip;
  }

  async function redeem(code: string, trip: RoundTrip, audit: Audit) {
    const { kept, grant } = grantKeepingSession();
    const tokens = await grant.handle({ code, redirect_uri: redirectUri, code_verifier: trip.verifier }, { client, method: 'none' }, audit);
    const now = epochSeconds(deps.clock);
    const id = tokens.id_token === undefined ? undefined : await verifyJwt(deps.keys, 'id', tokens.id_token, { issuer: deps.issuer, now });
    const access = await verifyJwt(deps.keys, 'access', tokens.access_token, { issuer: deps.issuer, now });
    // OpenID Connect Core §3.1.3.7: the ID token is for this client, and answers this request.
    if (!id || id.aud !== CONSOLE_CLIENT_ID || id.nonce !== trip.nonce || typeof id.sub !== 'string') return undefined;
    if (!access || typeof access.svc_uid !== 'string' || access.sub !== id.sub) return undefined;
    return { id, userId: access.svc_uid, browserSessionKey: kept.browserSessionKey };
  }

  return {
    async start(returnTo) {
      const state = randomToken();
      const trip: RoundTrip = { verifier: randomToken(48), nonce: randomToken(), returnTo: consolePath(deps.basePath, returnTo) };
      await deps.ephemeral.set(NAMESPACES.consoleSignIn, hashToken(state), trip, ROUND_TRIP_SECONDS);
      const query = new URLSearchParams({
        client_id: CONSOLE_CLIENT_ID,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: CONSOLE_SCOPES.join(' '),
        state,
        nonce: trip.nonce,
        code_challenge: s256Challenge(trip.verifier),
        code_challenge_method: 'S256',
      });
      return { state, location: `${deps.baseUrl}/connect/authorize?${query}` };
    },

    async finish({ query, cookieState, audit }) {
      const trip = await takeRoundTrip(query.state, cookieState);
      if (!trip) return { kind: 'failed', reason: 'The sign-in did not start in this browser, was used already, or took too long.' };
      if (query.error !== undefined || !query.code) return { kind: 'failed', reason: `The sign-in was refused (${query.error ?? 'no code'}).` };
      let redeemed: Awaited<ReturnType<typeof redeem>>;
      try {
        redeemed = await redeem(query.code, trip, audit);
      } catch (error) {
        if (error instanceof OAuthError) return { kind: 'failed', reason: error.description };
        throw error;
      }
      if (!redeemed) return { kind: 'failed', reason: 'The sign-in answer did not verify.' };
      const { id, userId, browserSessionKey } = redeemed;
      if (!Array.isArray(id.amr) || !id.amr.includes('mfa')) return { kind: 'no-mfa' };
      const roles = typeof id.role === 'string' ? [id.role] : Array.isArray(id.role) ? id.role.filter((r): r is string => typeof r === 'string') : [];
      if (consoleRolesOf(roles).length === 0) return { kind: 'forbidden' };
      // The session that signed in must still be live (and this user's): its end ends the console session.
      const browser = browserSessionKey === undefined ? undefined : (await deps.browserSessions.listForUser(userId)).find((s) => s.key === browserSessionKey);
      if (!browser || browser.session.userId !== userId) return { kind: 'failed', reason: 'The browser session of this sign-in is over.' };
      const sessionId = await deps.consoleSessions.create({ userId, sub: id.sub as string, browserSessionKey: browser.key });
      return { kind: 'signed-in', sessionId, returnTo: trip.returnTo };
    },
  };
}
