/**
 * End session (OpenID Connect RP-Initiated Logout 1.0) from outside, with a cookie-jar browser:
 * id_token_hint (expired hints accepted, foreign signatures refused, a hint signed by a rotated
 * but unretired key accepted), client_id, post_logout_redirect_uri (exact match, 302 with
 * state) or the signed-out page; the confirmation page when the hint names someone else or
 * there is no hint; the client's tokens for the browser's user revoked, and none without a
 * session (an ID token alone is no credential); every error on the service's own
 * page (4xx, the code in the text, never a redirect).
 */
import { generateKeyPair, SignJWT } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/services.ts';
import {
  ALICE, BOB, Browser, DISABLE_LOGOUT, REDIRECTS, SPA, TO_DISABLE, WEB, WEB_LOGOUT, WEB_REDIRECT, decodeJwt,
  expectActive, expectInactive, expectUserinfoAccepted, expectUserinfoRefused, idpOk, isSignInPage, propagation,
  readForm, refresh, relyingParty, seedFor, sleep, startCluster, tokensWith, type Cluster, type ClientCredentials,
  type Page, type Tokens,
} from './token-lifecycle-support.ts';

const SHORT: ClientCredentials = { clientId: 'short', secret: 'short-lifecycle-secret-0123456789abcdefgh' };
const SHORT_REDIRECT = 'https://short.test/cb';
const SHORT_LOGOUT = 'https://short.test/bye';
REDIRECTS.short = SHORT_REDIRECT;

function logoutUrl(base: string, params: Record<string, string>): string {
  return `${base}/connect/logout?${new URLSearchParams(params).toString()}`;
}

function isConfirmationPage(page: Page): boolean {
  return page.status === 200 && /<form[^>]*action="[^"]*\/connect\/logout"/.test(page.body) && />\s*Sign out\s*</.test(page.body);
}

function isSignedOutPage(page: Page): boolean {
  return page.status === 200 && /signed out/i.test(page.body) && !/<form/i.test(page.body);
}

/** An end-session error: our own page, 4xx, the code in its text, no redirect. */
function expectErrorPage(page: Page, codes: string[]): void {
  expect(page.status, page.body.slice(0, 300)).toBeGreaterThanOrEqual(400);
  expect(page.status).toBeLessThan(500);
  expect(page.location, 'never a redirect').toBeUndefined();
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  const shown = codes.filter((code) => page.body.includes(code));
  expect(shown.length, `one of ${codes.join(', ')} in the page`).toBeGreaterThan(0);
}

describe.runIf(postgresAvailable)('end session (RP-Initiated Logout)', () => {
  let cluster: Cluster;
  let base: string;

  beforeAll(async () => {
    const seed = seedFor();
    seed.clients.push({
      client_id: SHORT.clientId, client_secret: SHORT.secret, display_name: 'Short-lived tokens',
      grant_types: ['authorization_code'], scopes: ['openid'],
      redirect_uris: [SHORT_REDIRECT], post_logout_redirect_uris: [SHORT_LOGOUT], access_token_lifetime: 2, require_consent: false,
    } as (typeof seed.clients)[number]);
    cluster = await startCluster({ seed });
    base = cluster.base;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  /** Whether the browser still has a session: an authorization then needs no sign-in page. */
  async function signedIn(browser: Browser): Promise<boolean> {
    const query = new URLSearchParams({
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    });
    const page = await browser.follow(await browser.get(`${base}/connect/authorize?${query.toString()}`), base);
    if (isSignInPage(page)) return false;
    expect(page.location?.startsWith(`${WEB_REDIRECT}?`), page.location).toBe(true);
    return true;
  }

  // Introspection is for confidential clients only.
  async function expectRevoked(who: ClientCredentials, tokens: Tokens): Promise<void> {
    if (who.secret !== undefined) await expectInactive(base, who, tokens.access_token);
    await expectUserinfoRefused(base, tokens.access_token);
    const res = await refresh(base, who, tokens.refresh_token);
    expect(res.body.error, res.text).toBe('invalid_grant');
  }

  async function expectLive(who: ClientCredentials, tokens: Tokens): Promise<void> {
    if (who.secret !== undefined) await expectActive(base, who, tokens.access_token);
    await expectUserinfoAccepted(base, tokens.access_token);
  }

  describe('signing out', () => {
    it('redirects to the registered post_logout_redirect_uri with state, ends the session and revokes the client\'s tokens for the user', async () => {
      const browser = new Browser();
      const web = await tokensWith(browser, base, ALICE, WEB);
      const spa = await tokensWith(browser, base, ALICE, SPA);
      // Bob's tokens at the same client must survive Alice's sign-out.
      const bobs = await tokensWith(new Browser(), base, BOB, WEB);
      expect(await signedIn(browser)).toBe(true);

      const config = await relyingParty(cluster, WEB);
      const url = client.buildEndSessionUrl(config, { id_token_hint: web.id_token ?? '', post_logout_redirect_uri: WEB_LOGOUT, state: 'st a&te' });
      expect(url.href.startsWith(`${base}/connect/logout?`)).toBe(true);
      const page = await browser.get(url.href);
      expect(page.status, page.body.slice(0, 300)).toBe(302);
      const target = new URL(page.location ?? '');
      expect(`${target.origin}${target.pathname}`).toBe(WEB_LOGOUT);
      expect(target.searchParams.get('state')).toBe('st a&te');

      expect(await signedIn(browser)).toBe(false);
      await expectRevoked(WEB, web);
      await expectLive(SPA, spa);
      expect((await refresh(base, SPA, spa.refresh_token)).status).toBe(200);
      await expectLive(WEB, bobs);
    });

    it('shows the signed-out page without a post_logout_redirect_uri', async () => {
      const browser = new Browser();
      const web = await tokensWith(browser, base, BOB, WEB);
      const page = await browser.get(logoutUrl(base, { id_token_hint: web.id_token ?? '' }));
      expect(page.location).toBeUndefined();
      expect(isSignedOutPage(page), page.body.slice(0, 500)).toBe(true);
      expect(await signedIn(browser)).toBe(false);
      await expectRevoked(WEB, web);
    });

    it('accepts the parameters as a POST form too', async () => {
      const browser = new Browser();
      const web = await tokensWith(browser, base, BOB, WEB);
      const page = await browser.post(`${base}/connect/logout`, { id_token_hint: web.id_token ?? '', post_logout_redirect_uri: WEB_LOGOUT, state: 's1' });
      expect(page.status, page.body.slice(0, 300)).toBe(302);
      expect(page.location).toBe(`${WEB_LOGOUT}?state=s1`);
      expect(await signedIn(browser)).toBe(false);
      await expectRevoked(WEB, web);
    });

    it('accepts an expired id_token_hint', async () => {
      const browser = new Browser();
      const short = await tokensWith(browser, base, ALICE, SHORT, 'openid');
      const id = decodeJwt(short.id_token ?? '').payload;
      await sleep((Number(id.exp) + 1) * 1000 - Date.now() + 200);
      expect(Date.now() / 1000).toBeGreaterThan(Number(id.exp));
      const page = await browser.get(logoutUrl(base, { id_token_hint: short.id_token ?? '', post_logout_redirect_uri: SHORT_LOGOUT, state: 'late' }));
      expect(page.status, page.body.slice(0, 300)).toBe(302);
      expect(page.location).toBe(`${SHORT_LOGOUT}?state=late`);
      expect(await signedIn(browser)).toBe(false);
    });

    it('ends nothing for a browser without a session: an old ID token revokes none of its user\'s tokens', async () => {
      const web = await tokensWith(new Browser(), base, BOB, WEB);
      // Anyone holding the ID token (from a log, a browser history) asks for the user's logout.
      const page = await new Browser().get(logoutUrl(base, { id_token_hint: web.id_token ?? '', post_logout_redirect_uri: WEB_LOGOUT }));
      expect(page.status, page.body.slice(0, 300)).toBe(302);
      expect(page.location).toBe(WEB_LOGOUT);
      await expectLive(WEB, web);
      expect(isSignedOutPage(await new Browser().get(logoutUrl(base, { id_token_hint: web.id_token ?? '' })))).toBe(true);
      await expectLive(WEB, web);
      expect((await refresh(base, WEB, web.refresh_token)).status).toBe(200);
    });
  });

  describe('confirmation', () => {
    it('asks the signed-in user to confirm when the hint names another user, then signs the signed-in user out', async () => {
      const browser = new Browser();
      const bobs = await tokensWith(browser, base, BOB, WEB);
      const alices = await tokensWith(new Browser(), base, ALICE, WEB);

      const page = await browser.get(logoutUrl(base, { id_token_hint: alices.id_token ?? '', post_logout_redirect_uri: WEB_LOGOUT, state: 'c1' }));
      expect(isConfirmationPage(page), page.body.slice(0, 800)).toBe(true);
      expect(page.location).toBeUndefined();
      // Nothing happened yet.
      expect(await signedIn(browser)).toBe(true);
      await expectLive(WEB, bobs);
      await expectLive(WEB, alices);

      const form = readForm(page.body, page.url);
      const done = await browser.post(form.action, form.fields);
      expect(done.status, done.body.slice(0, 300)).toBe(302);
      expect(done.location).toBe(`${WEB_LOGOUT}?state=c1`);
      expect(await signedIn(browser)).toBe(false);
      await expectRevoked(WEB, bobs);
      // The confirmation signs out the browser's user, not the one the hint names.
      await expectLive(WEB, alices);
    });

    it('asks to confirm when there is no hint (signed-out page after), and with client_id alone (redirect after)', async () => {
      const browser = new Browser();
      await tokensWith(browser, base, ALICE, WEB);
      const page = await browser.get(`${base}/connect/logout`);
      expect(isConfirmationPage(page), page.body.slice(0, 800)).toBe(true);
      expect(await signedIn(browser)).toBe(true);
      const form = readForm(page.body, page.url);
      const done = await browser.post(form.action, form.fields);
      expect(isSignedOutPage(done), done.body.slice(0, 500)).toBe(true);
      expect(await signedIn(browser)).toBe(false);

      const second = new Browser();
      const web = await tokensWith(second, base, ALICE, WEB);
      const ask = await second.get(logoutUrl(base, { client_id: 'web', post_logout_redirect_uri: WEB_LOGOUT, state: 'c2' }));
      expect(isConfirmationPage(ask), ask.body.slice(0, 800)).toBe(true);
      expect(ask.body).toContain('Web shop');
      const confirm = readForm(ask.body, ask.url);
      const after = await second.post(confirm.action, confirm.fields);
      expect(after.status, after.body.slice(0, 300)).toBe(302);
      expect(after.location).toBe(`${WEB_LOGOUT}?state=c2`);
      expect(await signedIn(second)).toBe(false);
      await expectRevoked(WEB, web);
    });

    it('does not sign out on a confirmation form posted without its CSRF token', async () => {
      const browser = new Browser();
      await tokensWith(browser, base, BOB, WEB);
      const page = await browser.get(`${base}/connect/logout`);
      expect(isConfirmationPage(page)).toBe(true);
      const form = readForm(page.body, page.url);
      const { csrf_token: _dropped, ...fields } = form.fields;
      const forged = await browser.post(form.action, fields);
      expect(isSignedOutPage(forged), 'signed out without the CSRF token').toBe(false);
      expect(await signedIn(browser)).toBe(true);
    });

    it('keeps the session and the tokens on Cancel, and links back to the client it knows', async () => {
      const browser = new Browser();
      const web = await tokensWith(browser, base, ALICE, WEB);
      const ask = await browser.get(logoutUrl(base, { client_id: 'web', post_logout_redirect_uri: WEB_LOGOUT, state: 'k1' }));
      expect(isConfirmationPage(ask), ask.body.slice(0, 800)).toBe(true);
      const form = readForm(ask.body, ask.url);
      // Cancel without the page's CSRF token is not a cancel: the confirmation comes back.
      const { csrf_token: _dropped, ...unproven } = form.fields;
      expect(isConfirmationPage(await browser.post(form.action, { ...unproven, cancel: '1' }))).toBe(true);
      const cancelled = await browser.post(form.action, { ...form.fields, cancel: '1' });
      expect(cancelled.status, cancelled.body.slice(0, 300)).toBe(200);
      expect(cancelled.location, 'no redirect to the post-logout URI').toBeUndefined();
      expect(cancelled.body).toContain('You are still signed in');
      expect(cancelled.body).toContain(`href="${new URL(WEB_REDIRECT).origin}/"`);
      expect(await signedIn(browser)).toBe(true);
      await expectLive(WEB, web);
    });
  });

  describe('errors on the service\'s own page', () => {
    it('refuses a post_logout_redirect_uri with neither id_token_hint nor client_id (invalid_request)', async () => {
      const browser = new Browser();
      await tokensWith(browser, base, ALICE, WEB);
      expectErrorPage(await browser.get(logoutUrl(base, { post_logout_redirect_uri: WEB_LOGOUT, state: 'x' })), ['invalid_request']);
      expect(await signedIn(browser)).toBe(true);
    });

    it('refuses an unregistered post_logout_redirect_uri, by client_id and by hint', async () => {
      const browser = new Browser();
      const web = await tokensWith(browser, base, ALICE, WEB);
      for (const uri of ['http://evil.test/bye', `${WEB_LOGOUT}/more`, `${WEB_LOGOUT}?x=1`, DISABLE_LOGOUT]) {
        expectErrorPage(await browser.get(logoutUrl(base, { client_id: 'web', post_logout_redirect_uri: uri })), ['invalid_request']);
        expectErrorPage(await browser.get(logoutUrl(base, { id_token_hint: web.id_token ?? '', post_logout_redirect_uri: uri })), ['invalid_request']);
      }
      expect(await signedIn(browser)).toBe(true);
      await expectLive(WEB, web);
    });

    it('refuses an id_token_hint the service did not issue (a foreign signature, or garbage)', async () => {
      const browser = new Browser();
      const web = await tokensWith(browser, base, ALICE, WEB);
      const real = decodeJwt(web.id_token ?? '');
      const { privateKey } = await generateKeyPair('RS256');
      const forged = await new SignJWT({ ...real.payload })
        .setProtectedHeader({ alg: 'RS256', kid: String(real.header.kid), typ: 'JWT' })
        .sign(privateKey);
      for (const hint of [forged, 'not-a-jwt']) {
        expectErrorPage(await browser.get(logoutUrl(base, { id_token_hint: hint, post_logout_redirect_uri: WEB_LOGOUT })), ['invalid_request']);
        expectErrorPage(await browser.get(logoutUrl(base, { id_token_hint: hint })), ['invalid_request']);
      }
      expect(await signedIn(browser)).toBe(true);
      await expectLive(WEB, web);
    });

    it('refuses a disabled client (unauthorized_client), by client_id and by hint', async () => {
      const browser = new Browser();
      const disabled = await tokensWith(browser, base, ALICE, TO_DISABLE, 'openid offline_access');
      await idpOk(cluster, ['clients', 'disable', 'to-disable']);
      await propagation();
      expectErrorPage(await browser.get(logoutUrl(base, { client_id: 'to-disable', post_logout_redirect_uri: DISABLE_LOGOUT })), ['unauthorized_client']);
      expectErrorPage(await browser.get(logoutUrl(base, { id_token_hint: disabled.id_token ?? '', post_logout_redirect_uri: DISABLE_LOGOUT })), ['unauthorized_client']);
      expectErrorPage(await browser.get(logoutUrl(base, { id_token_hint: disabled.id_token ?? '' })), ['unauthorized_client']);
      expect(await signedIn(browser)).toBe(true);
    });
  });

  describe('signing keys', () => {
    it('accepts a hint signed by a key rotated out but not retired, and refuses it once the key is retired', async () => {
      const browser = new Browser();
      const before = await tokensWith(browser, base, BOB, WEB);
      const oldKid = String(decodeJwt(before.id_token ?? '').header.kid);
      const another = await tokensWith(new Browser(), base, ALICE, WEB);
      await idpOk(cluster, ['keys', 'rotate']);
      await propagation();
      // New tokens come from the new key.
      const after = await tokensWith(new Browser(), base, ALICE, WEB);
      expect(decodeJwt(after.id_token ?? '').header.kid).not.toBe(oldKid);

      const page = await browser.get(logoutUrl(base, { id_token_hint: before.id_token ?? '', post_logout_redirect_uri: WEB_LOGOUT, state: 'k' }));
      expect(page.status, page.body.slice(0, 300)).toBe(302);
      expect(page.location).toBe(`${WEB_LOGOUT}?state=k`);
      expect(await signedIn(browser)).toBe(false);

      // Its tokens are still within their lifetime: only --force retires it now.
      await idpOk(cluster, ['keys', 'retire', oldKid, '--force']);
      await propagation();
      expectErrorPage(await new Browser().get(logoutUrl(base, { id_token_hint: another.id_token ?? '', post_logout_redirect_uri: WEB_LOGOUT })), ['invalid_request']);
    });
  });
});
