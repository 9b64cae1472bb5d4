/**
 * A user's sessions and applications (services.userSessions: admin/sessions.ts and
 * admin/applications.ts), driven by real sign-ins through the pages of the app in this process,
 * on the in-process store and on Redis: a signed-in browser is listed, logout unlists it, ending
 * one session ends only it and its tokens (introspection says inactive), ending all ends every
 * session and family, the account page's "Sign out other sessions" ends theirs with their tokens, and removing an application's access revokes only its tokens and forgets
 * the consent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminError } from '../../src/admin/errors.ts';
import { NAMESPACES } from '../../src/store/types.ts';
import { hashToken } from '../../src/tokens/opaque.ts';
import {
  ALICE, BOB, Browser, CONSENT_REDIRECT, CONSENT_SECRET, NO_REFRESH_REDIRECT, NO_REFRESH_SECRET, SEED, WEB_REDIRECT, WEB_SECRET,
  authorizeThroughPages, codeFrom, codeRequest, isConsentPage, pkce, redeem,
} from '../e2e/code-flow-support.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';
import { introspect, refresh, type ClientCredentials, type User } from '../helpers/relying-party.ts';
import { REDIS_URL, redisAvailable } from '../helpers/services.ts';

const WEB: ClientCredentials = { clientId: 'web', secret: WEB_SECRET };
const NO_REFRESH: ClientCredentials = { clientId: 'no-refresh', secret: NO_REFRESH_SECRET };
const CONSENTING: ClientCredentials = { clientId: 'consenting', secret: CONSENT_SECRET };
const REDIRECTS: Record<string, string> = { web: WEB_REDIRECT, 'no-refresh': NO_REFRESH_REDIRECT, consenting: CONSENT_REDIRECT };

/** These cases record no event of their endings (their events are the pages' and the API's). */
const UNRECORDED = { recorder: { logged: () => {} }, eventsOf: () => [] };

interface Tokens {
  access: string;
  refresh: string | undefined;
  idToken: string;
}

function userSessionsSuite(name: string, env: Record<string, string>): void {
  describe(`a user's sessions and applications (${name})`, () => {
    let app: InProcessApp;
    let alice: string;
    let bob: string;

    beforeAll(async () => {
      app = await startInProcess({ seed: SEED, env });
      const id = async (username: string) => (await app.services.durable.users.getByUsername('local', username))!.id;
      [alice, bob] = [await id(ALICE.username), await id(BOB.username)];
    });
    afterAll(async () => {
      await app?.close();
    });

    const sessions = () => app.services.userSessions;
    /** Signs `who` in (if this browser is not yet) and redeems a code for `client`. */
    async function signIn(browser: Browser, client: ClientCredentials, who: User = ALICE, scope = 'openid'): Promise<Tokens> {
      const redirect = REDIRECTS[client.clientId]!;
      const { verifier, challenge } = pkce();
      const page = await authorizeThroughPages(browser, app.base, codeRequest(app.base, client.clientId, redirect, challenge, { scope }), who);
      const res = await redeem(app.base, codeFrom(page, redirect, app.issuer), redirect, verifier, client);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return { access: String(res.body.access_token), refresh: res.body.refresh_token as string | undefined, idToken: String(res.body.id_token) };
    }
    const active = async (client: ClientCredentials, token: string) => (await introspect(app.base, client, token)).body.active;
    const keyOf = (browser: Browser) => hashToken(browser.cookies.get('idp_session') ?? '');

    it('lists a signed-in browser session (the caller\'s marked) and its refresh token family, and refuses an unknown user', async () => {
      const browser = new Browser();
      await signIn(browser, WEB, ALICE, 'openid offline_access');
      const listed = await sessions().listUserSessions(alice, { currentKey: keyOf(browser) });
      const mine = listed.browserSessions.find((s) => s.current);
      expect(mine).toMatchObject({ clients: ['web'], amr: ['pwd'] });
      expect(mine?.authTime).toBeInstanceOf(Date);
      // Its public id is neither the cookie's value nor the store key.
      expect([browser.cookies.get('idp_session'), keyOf(browser)]).not.toContain(mine?.id);
      expect(listed.refreshTokenFamilies.some((f) => f.clientId === 'web' && f.expiresAt > f.createdAt)).toBe(true);
      expect((await sessions().listUserSessions(bob)).browserSessions).toEqual([]);
      await expect(sessions().listUserSessions('no-such-user')).rejects.toMatchObject({ code: 'not_found' });
    });

    it('unlists a browser session at logout, and drops it from the user\'s index', async () => {
      const browser = new Browser();
      const tokens = await signIn(browser, NO_REFRESH);
      const key = keyOf(browser);
      expect((await sessions().listUserSessions(alice, { currentKey: key })).browserSessions.some((s) => s.current)).toBe(true);
      const out = await browser.get(`${app.base}/connect/logout?id_token_hint=${encodeURIComponent(tokens.idToken)}`);
      expect(out.status).toBe(200);
      expect((await sessions().listUserSessions(alice, { currentKey: key })).browserSessions.some((s) => s.current)).toBe(false);
      expect(await app.services.ephemeral.indexed(NAMESPACES.userSessions, alice)).not.toContain(key);
    });

    it('ends one browser session and its clients\' tokens, or one family and its tokens, and nothing else', async () => {
      const [first, second] = [new Browser(), new Browser()];
      const kept = await signIn(first, WEB, ALICE, 'openid offline_access');
      const ended = await signIn(second, NO_REFRESH);
      const target = (await sessions().listUserSessions(alice, { currentKey: keyOf(second) })).browserSessions.find((s) => s.current)!;
      expect(await sessions().endUserSession(alice, target.id, UNRECORDED)).toEqual({ kind: 'browser_session' });
      expect(await active(NO_REFRESH, ended.access)).toBe(false);
      expect(await active(WEB, kept.access)).toBe(true);
      const after = await sessions().listUserSessions(alice, { currentKey: keyOf(first) });
      expect(after.browserSessions.map((s) => s.id)).not.toContain(target.id);
      expect(after.browserSessions.some((s) => s.current)).toBe(true);

      // The newest of web's families (an earlier case signed in there too) is this browser's.
      const family = after.refreshTokenFamilies.filter((f) => f.clientId === 'web').at(-1)!;
      expect(await sessions().endUserSession(alice, family.id, UNRECORDED)).toEqual({ kind: 'refresh_token_family' });
      expect(await active(WEB, kept.access)).toBe(false);
      expect((await refresh(app.base, WEB, kept.refresh!)).status).toBe(400);
      expect((await sessions().listUserSessions(alice)).refreshTokenFamilies.map((f) => f.id)).not.toContain(family.id);
      // Ended already, another user's, or never there: not found.
      for (const [user, id] of [[alice, family.id], [alice, target.id], [bob, family.id], [alice, 'nothing']] as const) {
        await expect(sessions().endUserSession(user, id, UNRECORDED)).rejects.toBeInstanceOf(AdminError);
      }
    });

    it('ends every session and family of the user, and no one else\'s', async () => {
      const [one, two, bobs] = [new Browser(), new Browser(), new Browser()];
      const tokens = [await signIn(one, WEB, ALICE, 'openid offline_access'), await signIn(two, NO_REFRESH)];
      const bobTokens = await signIn(bobs, WEB, BOB, 'openid offline_access');
      const ended = await sessions().endUserSessions(alice, UNRECORDED);
      expect(ended.browserSessions).toBeGreaterThanOrEqual(2);
      expect(ended.refreshTokenFamilies).toBeGreaterThanOrEqual(1);
      expect(await sessions().listUserSessions(alice)).toEqual({ refreshTokenFamilies: [], browserSessions: [] });
      expect(await active(WEB, tokens[0]!.access)).toBe(false);
      expect(await active(NO_REFRESH, tokens[1]!.access)).toBe(false);
      expect((await refresh(app.base, WEB, tokens[0]!.refresh!)).status).toBe(400);
      expect(await active(WEB, bobTokens.access)).toBe(true);
      expect((await sessions().listUserSessions(bob)).browserSessions).toHaveLength(1);
    });

    it('ends the other browser sessions of the user, keeping the caller\'s', async () => {
      const [mine, other] = [new Browser(), new Browser()];
      await signIn(mine, NO_REFRESH);
      await signIn(other, NO_REFRESH);
      expect(await sessions().endOtherBrowserSessions(alice, keyOf(mine), UNRECORDED)).toBeGreaterThanOrEqual(1);
      const left = (await sessions().listUserSessions(alice, { currentKey: keyOf(mine) })).browserSessions;
      expect(left.map((s) => s.current)).toEqual([true]);
    });

    it('"Sign out other sessions" on the account page ends the other browsers\' tokens too, not this browser\'s', async () => {
      await sessions().endUserSessions(alice, UNRECORDED);
      const [mine, other] = [new Browser(), new Browser()];
      const kept = await signIn(mine, NO_REFRESH);
      const stolen = await signIn(other, WEB, ALICE, 'openid offline_access');
      const page = await mine.get(`${app.base}/account`);
      expect(page.status).toBe(200);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
      const ended = await mine.post(`${app.base}/account/sessions/end-others`, { csrf_token: csrf });
      expect(ended.location).toBe(`${app.base}/account?done=sessions-ended`);
      expect(await active(WEB, stolen.access)).toBe(false);
      expect((await refresh(app.base, WEB, stolen.refresh!)).status).toBe(400);
      expect(await active(NO_REFRESH, kept.access)).toBe(true);
      expect((await sessions().listUserSessions(alice, { currentKey: keyOf(mine) })).browserSessions.map((s) => s.current)).toEqual([true]);
    });

    it('lists applications with a family or a consent, and removes one\'s access: its tokens only, and the consent', async () => {
      await sessions().endUserSessions(alice, UNRECORDED);
      const browser = new Browser();
      const web = await signIn(browser, WEB, ALICE, 'openid offline_access');
      const consenting = await signIn(browser, CONSENTING, ALICE, 'openid email');
      const apps = await sessions().listApplications(alice);
      expect(apps.map((a) => [a.clientId, a.displayName])).toEqual([['consenting', 'Consenting app'], ['web', 'Web shop']]);
      expect(apps[0]?.lastUsedAt).toBeNull();
      expect(apps[0]?.scopes.toSorted()).toEqual(['email', 'openid']);
      expect(apps[1]?.lastUsedAt).toBeInstanceOf(Date);

      await sessions().removeApplicationAccess(alice, 'web', UNRECORDED);
      expect(await active(WEB, web.access)).toBe(false);
      expect((await refresh(app.base, WEB, web.refresh!)).status).toBe(400);
      expect(await active(CONSENTING, consenting.access)).toBe(true);
      expect((await sessions().listApplications(alice)).map((a) => a.clientId)).toEqual(['consenting']);

      await sessions().removeApplicationAccess(alice, 'consenting', UNRECORDED);
      expect(await active(CONSENTING, consenting.access)).toBe(false);
      expect(await sessions().listApplications(alice)).toEqual([]);
      // The consent is forgotten: the next sign-in there asks again.
      const page = await browser.follow(await browser.get(codeRequest(app.base, 'consenting', CONSENT_REDIRECT, pkce().challenge, { scope: 'openid email' })), app.base);
      expect(isConsentPage(page)).toBe(true);
    });
  });
}

userSessionsSuite('in-process store', {});
if (redisAvailable) userSessionsSuite('Redis', { REDIS_URL });
