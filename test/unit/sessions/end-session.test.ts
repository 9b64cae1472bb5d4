/**
 * End session (RP-Initiated Logout 1.0) without HTTP, table-driven on the real stores: which
 * requests are refused (never redirected), when the user is asked, and what signing out ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuthError } from '../../../src/errors.ts';
import { endSession, type EndSessionDeps, type EndSessionOutcome } from '../../../src/sessions/end-session.ts';
import type { Params } from '../../../src/protocol/params.ts';
import { createSessionStore, type BrowserSession, type SessionStore } from '../../../src/sessions/browser-session.ts';
import { sessionCsrfToken } from '../../../src/sessions/csrf.ts';
import { POST_LOGOUT_REDIRECT as BACK, openHarness, type Harness } from '../grants/grant-harness.ts';

const CSRF_KEY = Buffer.alloc(32, 3);

/** What a case starts from: the browser's session (whose user), and the tokens the client holds. */
interface World {
  h: Harness;
  sessions: SessionStore;
  /** The browser's cookie and its session's store key; undefined without a session. */
  browser?: { sid: string; key: string };
  idToken: string;
  otherIdToken: string;
  accessToken: string;
}

interface EndSessionCase {
  name: string;
  /** The browser is signed in as Alice (else it sends no cookie). */
  signedIn: boolean;
  params(w: World): Params;
  /** An OAuth error code, or the outcome's kind (and, for a redirect, where). */
  expect: string;
  location?: string;
  /** Whether the browser's session ended and the client's tokens were revoked. */
  signsOut?: boolean;
}

const cases: EndSessionCase[] = [
  { name: 'no parameters and no session: the signed-out page', signedIn: false, params: () => ({}), expect: 'signed-out', signsOut: false },
  { name: 'a hint not issued here', signedIn: true, params: () => ({ id_token_hint: 'a.b.c' }), expect: 'invalid_request' },
  { name: 'a client_id other than the hint\'s', signedIn: true, params: (w) => ({ id_token_hint: w.idToken, client_id: 'other' }), expect: 'invalid_request' },
  { name: 'a post_logout_redirect_uri with no client', signedIn: true, params: () => ({ post_logout_redirect_uri: BACK }), expect: 'invalid_request' },
  { name: 'an unknown client', signedIn: true, params: () => ({ client_id: 'nobody' }), expect: 'invalid_request' },
  { name: 'a disabled client', signedIn: true, params: () => ({ client_id: 'disabled' }), expect: 'unauthorized_client' },
  { name: 'an unregistered post_logout_redirect_uri', signedIn: true, params: () => ({ client_id: 'rp', post_logout_redirect_uri: 'https://evil.example/' }), expect: 'invalid_request' },
  { name: 'a signed-in browser without a hint: the user is asked', signedIn: true, params: () => ({ client_id: 'rp' }), expect: 'confirm', signsOut: false },
  { name: 'a hint naming another user: the user is asked', signedIn: true, params: (w) => ({ id_token_hint: w.otherIdToken }), expect: 'confirm', signsOut: false },
  {
    name: 'the hint of the signed-in user: signed out, back to the registered URI with state',
    signedIn: true,
    params: (w) => ({ id_token_hint: w.idToken, post_logout_redirect_uri: BACK, state: 's 1' }),
    expect: 'redirect',
    location: BACK,
    signsOut: true,
  },
  {
    name: 'the confirmation posted back: signed out',
    signedIn: true,
    params: (w) => ({ client_id: 'rp', csrf_token: sessionCsrfToken(CSRF_KEY, w.browser?.key ?? '', 'logout') }),
    expect: 'signed-out',
    signsOut: true,
  },
  {
    name: 'the confirmation cancelled: nothing changes',
    signedIn: true,
    params: (w) => ({ client_id: 'rp', cancel: '1', csrf_token: sessionCsrfToken(CSRF_KEY, w.browser?.key ?? '', 'logout') }),
    expect: 'signed-out',
    signsOut: false,
  },
  {
    name: 'a forged confirmation: the user is asked again',
    signedIn: true,
    params: () => ({ client_id: 'rp', csrf_token: sessionCsrfToken(CSRF_KEY, 'another-session', 'logout') }),
    expect: 'confirm',
    signsOut: false,
  },
  { name: 'a hint alone, with no session: ends nothing', signedIn: false, params: (w) => ({ id_token_hint: w.idToken }), expect: 'signed-out', signsOut: false },
];

describe('end session', () => {
  let h: Harness;
  let sessions: SessionStore;
  let deps: EndSessionDeps;
  beforeAll(async () => {
    h = await openHarness();
    sessions = createSessionStore(h.ephemeral, () => h.now());
    deps = {
      ...h.deps, csrfKey: CSRF_KEY, sessions, clients: h.durable.clients, users: h.durable.users,
      refreshTokens: h.durable.refreshTokens, accessTokens: h.durable.accessTokens,
    };
  });
  afterAll(async () => {
    await h?.close();
  });

  async function world(signedIn: boolean): Promise<World> {
    const bob = await h.addUser(`bob${Math.random().toString(36).slice(2, 8)}`);
    const [tokens, others] = await Promise.all([h.signIn({ clientId: 'rp' }), h.signIn({ clientId: 'rp', userId: bob.id })]);
    const w: World = { h, sessions, idToken: tokens.id_token ?? '', otherIdToken: others.id_token ?? '', accessToken: tokens.access_token };
    if (signedIn) {
      const session: BrowserSession = { userId: h.user.id, authTime: Math.floor(h.now() / 1000), amr: ['pwd'], clients: ['rp'], createdAt: Math.floor(h.now() / 1000) };
      const created = sessions.rotation(undefined, session);
      await h.ephemeral.write(created.writes);
      w.browser = { sid: created.sid, key: created.key };
    }
    return w;
  }

  for (const c of cases) {
    it(`${c.name} -> ${c.expect}`, async () => {
      const w = await world(c.signedIn);
      let cookieCleared = false;
      const before = h.audit.length;
      const run = endSession({ params: c.params(w), sessionId: w.browser?.sid, signedOut: () => (cookieCleared = true), audit: h.log }, deps);
      const result: EndSessionOutcome | OAuthError = await run.catch((e: unknown) => {
        if (e instanceof OAuthError) return e;
        throw e;
      });
      if (result instanceof OAuthError) {
        expect(result.code).toBe(c.expect);
        expect(result.redirectable).toBe(false);
        expect(cookieCleared).toBe(false);
        return;
      }
      expect(result.kind).toBe(c.expect);
      if (result.kind === 'redirect') expect(result).toStrictEqual({ kind: 'redirect', location: c.location, query: { state: 's 1' } });
      if (result.kind === 'confirm') expect(result.fields.map((f) => f.name)).toStrictEqual(Object.keys(c.params(w)).filter((n) => n !== 'csrf_token'));
      const ended = result.kind !== 'confirm' && !(result.kind === 'signed-out' && result.stillSignedIn);
      expect(cookieCleared).toBe(ended);
      expect(h.audit.slice(before).some((e) => e.event === 'logout')).toBe(ended);
      if (c.signsOut !== undefined && w.browser) expect(await sessions.load(w.browser.sid) === undefined).toBe(c.signsOut);
      if (c.signsOut !== undefined) expect(await h.isRevoked(w.accessToken)).toBe(c.signsOut);
    });
  }

  it('names the account and the client on the confirmation', async () => {
    const w = await world(true);
    const result = await endSession({ params: { client_id: 'rp', state: 'x' }, sessionId: w.browser?.sid, signedOut: () => undefined, audit: h.log }, deps);
    expect(result).toMatchObject({ kind: 'confirm', accountName: 'Alice Liddell (alice)', fields: [{ name: 'client_id', value: 'rp' }, { name: 'state', value: 'x' }] });
    expect(result.kind === 'confirm' && result.client?.clientId).toBe('rp');
  });

  it('continues at the upstream provider when the user came from one', async () => {
    const w = await world(true);
    const key = w.browser?.key ?? '';
    const stored = await sessions.load(w.browser?.sid);
    await sessions.save(key, { ...(stored?.session as BrowserSession), upstreamIdToken: 'upstream-id-token' });
    const trips: unknown[] = [];
    const upstream = { ...deps, continueUpstream: async (idToken: string, trip: unknown) => (trips.push({ idToken, trip }), 'https://upstream.example/logout') };
    const result = await endSession({ params: { id_token_hint: w.idToken, post_logout_redirect_uri: BACK, state: 's' }, sessionId: w.browser?.sid, signedOut: () => undefined, audit: h.log }, upstream);
    expect(result).toStrictEqual({ kind: 'redirect', location: 'https://upstream.example/logout', query: {} });
    expect(trips).toStrictEqual([{ idToken: 'upstream-id-token', trip: { redirectUri: BACK, state: 's' } }]);
  });
});
