/**
 * Guesses made elsewhere do not lock a user out, and guessing stays bounded: on one `idp serve`
 * with IDP_LOGIN_MAX_FAILURES=3, IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT=6,
 * IDP_LOGIN_MAX_ATTEMPTS_PER_INTERACTION=4 and IDP_TRUST_PROXY=true (each browser presents its
 * own address in X-Forwarded-For). A browser that signed in to the account before (its device
 * cookie) keeps signing in while attackers from many addresses close the account to
 * unrecognised devices; a known device's failures count on their own; guesses from one address
 * do not lock the account at another; one interaction and its CSRF token take 4 passwords, then
 * the sign-in must start again; a concurrent burst from many addresses gets 6 guesses judged.
 * Under an https base URL the cookie is `__Secure-` and Secure, and is read back by that name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/process.ts';
import { postgresAvailable } from '../helpers/services.ts';
import { rawRequest } from './operations-support.ts';
import {
  AddressedBrowser, THROTTLED_TEXT, alertText, codeOf, describePage, expectKind, inBatches, readForm, signIn, startAuthorization,
  startStack, submit, type OpenForm, type Page, type SeedUser, type Stack,
} from './account-support.ts';

const DANA: SeedUser = { username: 'dana', password: 'she has a phone she trusts 1' };
const HAL: SeedUser = { username: 'hal', password: 'he mistypes on his laptop 2' };
const ERIC: SeedUser = { username: 'eric', password: 'he is guessed at elsewhere 3' };
const GUS: SeedUser = { username: 'gus', password: 'he gets one page only 4' };
const FAY: SeedUser = { username: 'fay', password: 'she is guessed at in a burst 5' };
const IVY: SeedUser = { username: 'ivy', password: 'she signs in over https 6' };

const WRONG = 'The username or password is incorrect.';
const UNRECOGNISED = 'Too many attempts for this account from unrecognised devices';
const NINETY_DAYS = 90 * 86400;

describe.runIf(postgresAvailable)('lockout resistance: device cookies, per-account ceiling, per-interaction bound', () => {
  let stack: Stack;
  let base: string;

  beforeAll(async () => {
    stack = await startStack([DANA, HAL, ERIC, GUS, FAY, IVY], {
      IDP_LOGIN_MAX_FAILURES: '3', IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: '6', IDP_LOGIN_MAX_ATTEMPTS_PER_INTERACTION: '4',
      IDP_LOGIN_MAX_FAILURES_PER_ADDRESS: '500', IDP_TRUST_PROXY: 'true',
    });
    base = stack.servers[0]?.url ?? '';
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** A fresh sign-in from `browser`; returns what the service answers to the password. */
  async function tryPassword(browser: AddressedBrowser, username: string, password: string) {
    const started = await startAuthorization(browser, base);
    expectKind(started.page, 'sign-in');
    return { page: await signIn(browser, started.page, base, username, password), started };
  }

  /**
   * Signs `user` in from `browser` and returns the device cookie's Set-Cookie line. The browser
   * then forgets its session (as after signing out, or 12 hours later) and keeps the device cookie.
   */
  async function signInKeepingDevice(browser: AddressedBrowser, user: SeedUser): Promise<string> {
    const started = await startAuthorization(browser, base);
    const form = readForm(started.page.body, started.page.url);
    const answer = await browser.post(form.action, { ...form.fields, username: user.username, password: user.password });
    codeOf(await browser.follow(answer, base), started.state);
    const line = answer.headers.getSetCookie().find((l) => l.startsWith('idp_device_'));
    expect(line, `a device cookie after ${user.username}'s sign-in`).toBeDefined();
    browser.cookies.delete('idp_session');
    return line ?? '';
  }

  it('a browser that signed in before keeps signing in while guesses from many addresses close the account to others', async () => {
    const phone = new AddressedBrowser();
    const line = await signInKeepingDevice(phone, DANA);
    expect(line).toMatch(/; Path=\/interaction(;|$)/);
    expect(line).toMatch(/; HttpOnly(;|$)/);
    expect(line).toMatch(/; SameSite=Lax(;|$)/);
    expect(line).toContain(`; Max-Age=${NINETY_DAYS}`);
    expect(line.toLowerCase(), 'no account name in clear').not.toContain('dana');

    // Five attackers, three guesses each (each a fresh sign-in): 6 are judged, then the account is closed to them.
    const answers: string[] = [];
    for (let a = 0; a < 5; a++) {
      const attacker = new AddressedBrowser();
      for (let g = 0; g < 3; g++) answers.push(alertText((await tryPassword(attacker, DANA.username, `guess ${a}-${g}`)).page));
    }
    expect(answers.filter((text) => text === WRONG).length, answers.join('\n')).toBe(6);
    expect(answers.slice(6).every((text) => text.includes(UNRECOGNISED)), answers.join('\n')).toBe(true);

    // The right password from a browser the account does not know: refused, and the page says why.
    const stranger = await tryPassword(new AddressedBrowser(), DANA.username, DANA.password);
    expectKind(stranger.page, 'sign-in');
    expect(alertText(stranger.page)).toContain(UNRECOGNISED);

    // Her phone signs in, from its address and from another one.
    const home = await tryPassword(phone, DANA.username, DANA.password);
    codeOf(home.page, home.started.state);
    phone.cookies.delete('idp_session');
    phone.address = new AddressedBrowser().address;
    const away = await tryPassword(phone, DANA.username, DANA.password);
    codeOf(away.page, away.started.state);
  });

  it("a known device's failures count on their own: they lock that device, not the account elsewhere", async () => {
    const laptop = new AddressedBrowser();
    await signInKeepingDevice(laptop, HAL);
    for (let i = 1; i <= 3; i++) expect(alertText((await tryPassword(laptop, HAL.username, `typo ${i}`)).page), `typo ${i}`).toBe(WRONG);
    const locked = await tryPassword(laptop, HAL.username, HAL.password);
    expectKind(locked.page, 'sign-in');
    expect(alertText(locked.page)).toContain(THROTTLED_TEXT);

    const desk = await tryPassword(new AddressedBrowser(), HAL.username, HAL.password);
    codeOf(desk.page, desk.started.state);
  });

  it('guesses from one address do not lock the account at another', async () => {
    const attacker = new AddressedBrowser();
    for (let i = 1; i <= 3; i++) expect(alertText((await tryPassword(attacker, ERIC.username, `guess ${i}`)).page)).toBe(WRONG);
    expect(alertText((await tryPassword(attacker, ERIC.username, ERIC.password)).page)).toContain(THROTTLED_TEXT);

    const own = await tryPassword(new AddressedBrowser(), ERIC.username, ERIC.password);
    codeOf(own.page, own.started.state);
  });

  it('one interaction and its CSRF token take 4 passwords; the 5th, even the right one, ends it', async () => {
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, base);
    expectKind(started.page, 'sign-in');
    const form = readForm(started.page.body, started.page.url);
    const post = async (username: string, password: string) => browser.follow(await browser.post(form.action, { ...form.fields, username, password }), base);
    // Other names each time: no name's own limit is reached.
    for (let i = 1; i <= 4; i++) {
      const page = await post(`someone-${i}`, 'a guess');
      expect(alertText(page), describePage(page)).toBe(WRONG);
    }
    const fifth = await post(GUS.username, GUS.password);
    expect(fifth.status, describePage(fifth)).toBe(400);
    expect(fifth.body).toContain('Start again from the application');
    expect(fifth.location, 'no code for the client').toBeUndefined();
    const sixth = await post(GUS.username, GUS.password);
    expect(sixth.status).toBe(400);

    const again = await tryPassword(browser, GUS.username, GUS.password);
    codeOf(again.page, again.started.state);
  });

  it('judges 6 of 60 concurrent guesses for one name, each from its own address and interaction; a known device still signs in', async () => {
    const tablet = new AddressedBrowser();
    await signInKeepingDevice(tablet, FAY);
    const forms = await inBatches(60, 12, async (): Promise<OpenForm> => {
      const browser = new AddressedBrowser();
      const { page } = await startAuthorization(browser, base);
      expectKind(page, 'sign-in');
      return { browser, page, base };
    });
    const answers: Page[] = await Promise.all(forms.map(({ browser, page }, i) => submit(browser, page, base, { username: FAY.username, password: `burst ${i}` })));
    const texts = answers.map(alertText);
    expect(texts.filter((t) => t === WRONG).length).toBe(6);
    expect(texts.filter((t) => t.includes(UNRECOGNISED)).length, texts.join('\n')).toBe(54);

    const stranger = await tryPassword(new AddressedBrowser(), FAY.username, FAY.password);
    expect(alertText(stranger.page)).toContain(UNRECOGNISED);
    const known = await tryPassword(tablet, FAY.username, FAY.password);
    codeOf(known.page, known.started.state);
  });

  describe('under an https base URL', () => {
    let secure: RunningServer;
    beforeAll(async () => {
      secure = await startServer({ ...stack.env, IDP_BASE_URL: 'https://idp.test', IDP_LOGIN_MAX_FAILURES: '3' });
    });
    afterAll(async () => {
      await secure?.stop();
    });

    /** A browser over raw HTTP that says it is at https://idp.test (a TLS proxy in front): a cookie jar and the form. */
    function httpsBrowser() {
      const jar = new Map<string, string>();
      const send = async (method: string, path: string, body?: string) => {
        const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') };
        if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
        const res = await rawRequest(secure.port, { method, path, host: 'idp.test', headers, ...(body === undefined ? {} : { body }) });
        const lines = res.headers['set-cookie'] ?? [];
        for (const line of lines) {
          const [pair] = line.split(';');
          const eq = pair?.indexOf('=') ?? -1;
          if (pair && eq > 0) jar.set(pair.slice(0, eq), pair.slice(eq + 1));
        }
        return { ...res, lines };
      };
      /** A fresh sign-in: the password posted, and the answer to it. */
      const signInWith = async (username: string, password: string) => {
        const query = new URLSearchParams({
          client_id: 'web', response_type: 'code', redirect_uri: 'https://rp.test/cb', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's',
        });
        const started = await send('GET', `/connect/authorize?${query}`);
        const page = await send('GET', new URL(String(started.headers.location), 'https://idp.test/').pathname);
        if (page.status !== 200) throw new Error(`${started.status} ${String(started.headers.location)} ${page.status} ${page.text.slice(0, 300)}`);
        const form = readForm(page.text, 'https://idp.test/');
        return send('POST', new URL(form.action).pathname, new URLSearchParams({ ...form.fields, username, password }).toString());
      };
      return { jar, signInWith };
    }

    it('sets a Secure __Secure- device cookie, and knows the device by it', async () => {
      const browser = httpsBrowser();
      const first = await browser.signInWith(IVY.username, IVY.password);
      expect(String(first.headers.location)).toMatch(/^https:\/\/rp\.test\/cb\?code=/);
      const line = first.lines.find((l) => l.startsWith('__Secure-idp_device_')) ?? '';
      expect(line, first.lines.join('\n')).toMatch(/; Path=\/interaction; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);

      // Three wrong passwords from the same address, without the device cookie: the account is locked there.
      for (let i = 0; i < 3; i++) expect((await httpsBrowser().signInWith(IVY.username, `guess ${i}`)).text).toContain(WRONG);
      expect((await httpsBrowser().signInWith(IVY.username, IVY.password)).text).toContain(THROTTLED_TEXT);
      // The browser with the device cookie (its session forgotten) still signs in from there.
      for (const name of [...browser.jar.keys()].filter((k) => k.startsWith('__Host-'))) browser.jar.delete(name);
      const again = await browser.signInWith(IVY.username, IVY.password);
      expect(String(again.headers.location), again.text.slice(0, 300)).toMatch(/^https:\/\/rp\.test\/cb\?code=/);
    });
  });
});
