/**
 * GET /connect/authorize, from outside the app running in this process: every error row of
 * RFC 6749 §4.1.2.1, each checked for WHERE it went (the service's own error page, never a redirect,
 * until client and redirect URI are trusted; after that a 302 to the redirect URI with error,
 * error_description, state and iss), the form_post and fragment response modes, and the rules
 * of the browser session (cookie, CSRF, prompt, max_age, id_token_hint, remembered consent).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpFetch } from '../helpers/http-transport.ts';
import { sleep } from '../helpers/relying-party.ts';
import {
  ALICE, BOB, Browser, CONSENT_REDIRECT, DISABLE_REDIRECT, SPA_REDIRECT, WEB_REDIRECT, WEB_SECRET,
  authorizeThroughPages, codeFrom, codeRequest, expectConsentPage, expectSignInPage, isSignInPage, pkce, readForm,
  redeem, startSeededApp, submitConsent, submitSignIn, type Page, type Setup,
} from '../e2e/code-flow-support.ts';

async function get(url: string): Promise<Page> {
  const res = await httpFetch(url, { redirect: 'manual' });
  const location = res.headers.get('location') ?? undefined;
  return { status: res.status, url, location, headers: res.headers, body: await res.text() };
}

/** The service's own error page: 4xx, HTML, the code in the text, and no way back to the client. */
function expectErrorPage(page: Page, code: string): void {
  expect(page.status, page.location).toBeGreaterThanOrEqual(400);
  expect(page.status).toBeLessThan(500);
  expect(page.headers.get('location')).toBeNull();
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(page.body).toContain(code);
}

describe('the authorize endpoint', () => {
  let setup: Setup;
  const challenge = pkce().challenge;

  beforeAll(async () => {
    setup = await startSeededApp();
  });
  afterAll(async () => {
    await setup?.stop();
  });

  /** A 302 to the redirect URI carrying the error, a description, the state and the issuer. */
  function expectRedirectedError(page: Page, redirectUri: string, code: string, state: string): void {
    expect(page.status, page.body.slice(0, 300)).toBe(302);
    expect(page.location?.startsWith(`${redirectUri}?`), page.location).toBe(true);
    const params = new URL(page.location ?? '').searchParams;
    expect(params.get('error')).toBe(code);
    expect(params.get('error_description')).toBeTruthy();
    expect(params.get('state')).toBe(state);
    expect(params.get('iss')).toBe(setup.issuer);
    expect(params.get('code')).toBeNull();
  }

  const request = (extra: Record<string, string | undefined>, clientId = 'web', redirectUri = WEB_REDIRECT) =>
    codeRequest(setup.base, clientId, redirectUri, challenge, { state: 'st-1', ...extra });

  describe('errors shown on the service\'s own page', () => {
    it.each([
      ['an unknown client_id', { client_id: 'nobody' }],
      ['a missing client_id', { client_id: undefined }],
      ['an unregistered redirect_uri', { redirect_uri: 'http://evil.test/cb' }],
      ['a redirect_uri of another client', { redirect_uri: SPA_REDIRECT }],
      ['a missing redirect_uri', { redirect_uri: undefined }],
    ])('%s', async (_name, extra) => {
      expectErrorPage(await get(request(extra)), 'invalid_request');
    });
  });

  describe('errors sent back to the redirect URI', () => {
    it.each([
      ['a missing response_type', { response_type: undefined }, 'invalid_request'],
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
      ['a request object', { request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported'],
      ['a request_uri', { request_uri: 'https://rp.test/request.jwt' }, 'request_uri_not_supported'],
      ['a scope the client may not use', { scope: 'openid orders.write' }, 'invalid_scope'],
      ['an administration scope', { scope: 'openid admin_api' }, 'invalid_scope'],
      ['a missing code_challenge', { code_challenge: undefined }, 'invalid_request'],
      ['code_challenge_method=plain', { code_challenge_method: 'plain', code_challenge: 'a'.repeat(43) }, 'invalid_request'],
      ['a missing code_challenge_method', { code_challenge_method: undefined }, 'invalid_request'],
      ['prompt=none without a session', { prompt: 'none' }, 'login_required'],
    ])('%s', async (_name, extra, code) => {
      expectRedirectedError(await get(request(extra)), WEB_REDIRECT, code, 'st-1');
    });

    it('a scope another client may use but this one may not (public client asking phone)', async () => {
      expectRedirectedError(await get(request({ scope: 'openid phone' }, 'spa', SPA_REDIRECT)), SPA_REDIRECT, 'invalid_scope', 'st-1');
    });

    it('a client disabled with SQL while the server runs: unauthorized_client within a second', async () => {
      const before = await get(request({}, 'to-disable', DISABLE_REDIRECT));
      expect(before.status).toBe(303);
      expect(before.location).toMatch(/^\/interaction\//);
      await setup.sql(`UPDATE clients SET enabled = false WHERE client_id = 'to-disable'`);
      await sleep(1200);
      expectRedirectedError(await get(request({}, 'to-disable', DISABLE_REDIRECT)), DISABLE_REDIRECT, 'unauthorized_client', 'st-1');
    });

    it('prompt=none on a client that requires consent, signed in but without consent: consent_required', async () => {
      const browser = new Browser();
      const signedIn = await authorizeThroughPages(browser, setup.base, request({}), BOB);
      codeFrom(signedIn, WEB_REDIRECT, setup.issuer);
      expectRedirectedError(await browser.get(request({ prompt: 'none' }, 'consenting', CONSENT_REDIRECT)), CONSENT_REDIRECT, 'consent_required', 'st-1');
    });

    it('consent denied: access_denied', async () => {
      const browser = new Browser();
      let page = await browser.follow(await browser.get(request({ state: 'deny-me' }, 'consenting', CONSENT_REDIRECT)), setup.base);
      page = await browser.follow(await submitSignIn(browser, page, BOB), setup.base);
      expectConsentPage(page);
      expect(page.body).toContain('Consenting app');
      expectRedirectedError(await submitConsent(browser, page, 'deny'), CONSENT_REDIRECT, 'access_denied', 'deny-me');
    });
  });

  describe('response modes', () => {
    const browser = new Browser();

    beforeAll(async () => {
      codeFrom(await authorizeThroughPages(browser, setup.base, request({}), ALICE), WEB_REDIRECT, setup.issuer);
    });

    it('form_post: a page that posts code, state and iss to the redirect URI, with the state escaped', async () => {
      const state = '"><script>alert(1)</script>';
      const { verifier, challenge: own } = pkce();
      const page = await browser.get(codeRequest(setup.base, 'web', WEB_REDIRECT, own, { response_mode: 'form_post', state }));
      expect(page.status).toBe(200);
      expect(page.headers.get('location')).toBeNull();
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const form = readForm(page.body, page.url);
      expect(form.action).toBe(WEB_REDIRECT);
      expect(/<form[^>]*method="post"/i.test(page.body)).toBe(true);
      expect(form.fields.state).toBe(state);
      expect(form.fields.iss).toBe(setup.issuer);
      expect(form.fields.code).toBeTruthy();
      expect(page.body).not.toContain('<script>alert(1)</script>');
      expect(page.body).not.toContain('"><script>');
      expect(page.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      // The only script is the page's own auto-submit, carrying the CSP nonce.
      expect(page.body.match(/<script/g)).toHaveLength(1);
      const csp = page.headers.get('content-security-policy') ?? '';
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      expect(nonce).toBeTruthy();
      expect(page.body).toContain(`<script nonce="${nonce}">`);
      expect(csp).toMatch(/form-action [^;]*https:\/\/rp\.test/);
      const redeemed = await redeem(setup.base, form.fields.code ?? '', WEB_REDIRECT, verifier, { clientId: 'web', secret: WEB_SECRET });
      expect(redeemed.status).toBe(200);
    });

    it('fragment: a 302 with the values after #', async () => {
      const page = await browser.get(request({ response_mode: 'fragment', state: 'frag' }));
      expect(page.status).toBe(302);
      expect(page.location?.startsWith(`${WEB_REDIRECT}#`), page.location).toBe(true);
      const url = new URL(page.location ?? '');
      expect(url.search).toBe('');
      const values = new URLSearchParams(url.hash.slice(1));
      expect(values.get('code')).toBeTruthy();
      expect(values.get('state')).toBe('frag');
      expect(values.get('iss')).toBe(setup.issuer);
    });
  });

  describe('the browser session', () => {
    it('keeps its id in an HttpOnly, SameSite=Lax cookie (not Secure over http) that changes at sign-in', async () => {
      const browser = new Browser();
      const start = await browser.get(request({}));
      const [cookie] = start.headers.getSetCookie();
      expect(cookie).toMatch(/^idp_session=[^;]+/);
      const attributes = (cookie ?? '').split(';').map((a) => a.trim().toLowerCase());
      expect(attributes).toContain('httponly');
      expect(attributes).toContain('samesite=lax');
      expect(attributes).not.toContain('secure');
      const anonymous = browser.cookies.get('idp_session');
      expect(anonymous).toBeTruthy();

      const page = await browser.follow(start, setup.base);
      const signedIn = await submitSignIn(browser, page, ALICE);
      const [rotated] = signedIn.headers.getSetCookie();
      expect(rotated).toMatch(/^idp_session=[^;]+/);
      expect(browser.cookies.get('idp_session')).toBeTruthy();
      expect(browser.cookies.get('idp_session')).not.toBe(anonymous);
      codeFrom(signedIn, WEB_REDIRECT, setup.issuer);

      // The id from before sign-in is worth nothing afterwards (no session fixation).
      const planted = new Browser();
      planted.cookies.set('idp_session', anonymous ?? '');
      expectRedirectedError(await planted.get(request({ prompt: 'none' })), WEB_REDIRECT, 'login_required', 'st-1');
      // prompt=none with the signed-in session and no consent needed: the code straight away.
      codeFrom(await browser.get(request({ prompt: 'none' })), WEB_REDIRECT, setup.issuer);
    });

    it('refuses a sign-in form without the right csrf_token, or from another browser', async () => {
      const browser = new Browser();
      const page = await browser.follow(await browser.get(request({})), setup.base);
      expectSignInPage(page);
      const form = readForm(page.body, page.url);
      expect(form.fields.csrf_token).toBeTruthy();
      const credentials = { username: ALICE.username, password: ALICE.password };

      expectErrorPage(await browser.post(form.action, { ...form.fields, ...credentials, csrf_token: 'x'.repeat(43) }), 'invalid_request');
      expectErrorPage(await browser.post(form.action, credentials), 'invalid_request');
      const stranger = new Browser();
      await stranger.get(request({}));
      expect(stranger.cookies.get('idp_session')).toBeTruthy();
      expectErrorPage(await stranger.post(form.action, { ...form.fields, ...credentials }), 'invalid_request');
      expectErrorPage(await new Browser().post(form.action, { ...form.fields, ...credentials }), 'invalid_request');

      // The genuine form still works: the refusals above were about the token and the browser.
      codeFrom(await browser.post(form.action, { ...form.fields, ...credentials }), WEB_REDIRECT, setup.issuer);
    });

    it('refuses a consent form without the right csrf_token', async () => {
      const browser = new Browser();
      let page = await browser.follow(await browser.get(request({ scope: 'openid email' }, 'consenting', CONSENT_REDIRECT)), setup.base);
      page = await browser.follow(await submitSignIn(browser, page, ALICE), setup.base);
      expectConsentPage(page);
      const form = readForm(page.body, page.url);
      expectErrorPage(await browser.post(form.action, { ...form.fields, csrf_token: 'forged', decision: 'allow' }), 'invalid_request');
      expectErrorPage(await new Browser().post(form.action, { ...form.fields, decision: 'allow' }), 'invalid_request');
    });

    it('shows the sign-in page again for prompt=login, but not for a recent enough sign-in (max_age)', async () => {
      const browser = new Browser();
      codeFrom(await authorizeThroughPages(browser, setup.base, request({}), ALICE), WEB_REDIRECT, setup.issuer);
      codeFrom(await browser.get(request({ max_age: '3600' })), WEB_REDIRECT, setup.issuer);
      const page = await browser.follow(await browser.get(request({ prompt: 'login' })), setup.base);
      expectSignInPage(page);
      // Signing in satisfies it once.
      codeFrom(await submitSignIn(browser, page, ALICE), WEB_REDIRECT, setup.issuer);
    });

    it('shows the sign-in page again for max_age=0, even right after a sign-in (OIDC Core: max_age=0 is prompt=login)', async () => {
      const browser = new Browser();
      const page = await browser.follow(await browser.get(request({})), setup.base);
      expectSignInPage(page);
      // Sign in at the start of a second and ask with max_age=0 within that same second: any
      // time elapsed at all since the sign-in is more than 0 seconds.
      await sleep(1000 - (Date.now() % 1000) + 10);
      codeFrom(await submitSignIn(browser, page, ALICE), WEB_REDIRECT, setup.issuer);
      const again = await browser.follow(await browser.get(request({ max_age: '0' })), setup.base);
      expectSignInPage(again);
      codeFrom(await submitSignIn(browser, again, ALICE), WEB_REDIRECT, setup.issuer);
    });

    it('shows the sign-in page for an id_token_hint naming another user', async () => {
      const idTokenOf = async (browser: Browser, user: typeof ALICE) => {
        const { verifier, challenge: own } = pkce();
        const page = await authorizeThroughPages(browser, setup.base, codeRequest(setup.base, 'web', WEB_REDIRECT, own), user);
        const res = await redeem(setup.base, codeFrom(page, WEB_REDIRECT, setup.issuer), WEB_REDIRECT, verifier, { clientId: 'web', secret: WEB_SECRET });
        expect(res.status).toBe(200);
        return String(res.body.id_token);
      };
      const alice = new Browser();
      const aliceToken = await idTokenOf(alice, ALICE);
      const bobToken = await idTokenOf(new Browser(), BOB);
      codeFrom(await alice.get(request({ id_token_hint: aliceToken })), WEB_REDIRECT, setup.issuer);
      const page = await alice.follow(await alice.get(request({ id_token_hint: bobToken })), setup.base);
      expectSignInPage(page);
      // The same with prompt=none cannot show the page: login_required.
      expectRedirectedError(await alice.get(request({ id_token_hint: bobToken, prompt: 'none' })), WEB_REDIRECT, 'login_required', 'st-1');
    });

    it('remembers consent for the same scopes, asks again for a new scope and for prompt=consent', async () => {
      const browser = new Browser();
      const consenting = (extra: Record<string, string>) => request({ scope: 'openid profile', ...extra }, 'consenting', CONSENT_REDIRECT);
      let page = await browser.follow(await browser.get(consenting({})), setup.base);
      expectSignInPage(page);
      page = await browser.follow(await submitSignIn(browser, page, ALICE), setup.base);
      expectConsentPage(page);
      codeFrom(await submitConsent(browser, page, 'allow'), CONSENT_REDIRECT, setup.issuer);

      codeFrom(await browser.get(consenting({})), CONSENT_REDIRECT, setup.issuer);
      codeFrom(await browser.get(consenting({ prompt: 'none' })), CONSENT_REDIRECT, setup.issuer);

      page = await browser.follow(await browser.get(consenting({ prompt: 'consent' })), setup.base);
      expectConsentPage(page);

      page = await browser.follow(await browser.get(consenting({ scope: 'openid profile phone' })), setup.base);
      expectConsentPage(page);
      expect(page.body).toContain('phone');
      expect(isSignInPage(page)).toBe(false);
      codeFrom(await submitConsent(browser, page, 'allow'), CONSENT_REDIRECT, setup.issuer);
      codeFrom(await browser.get(consenting({ scope: 'openid profile phone' })), CONSENT_REDIRECT, setup.issuer);
    });
  });
});
