/**
 * "Forgot password" in process, where the test moves the service's clock: a code is good for 15
 * minutes (and the sign-in page it leads back to is that of the same authorization request, even
 * when the request's own page has expired meanwhile); with a directory as the sign-in source the
 * sign-in page's "Forgot password?" leads to IDP_PASSWORD_RESET_URL, and the service's own
 * recovery is not offered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';
import { Browser, beginAuthorization, formTo, isSignInPage, readForm, type Page } from '../helpers/relying-party.ts';
import { roomInRateWindow } from '../e2e/operations-support.ts';
import { alertOf, askForCode, enterCode, forgotLink, isCodeForm } from '../e2e/recovery-support.ts';

const REDIRECT = 'https://rp.test/cb';
const CLIENT = {
  client_id: 'web', client_secret: 'recovery-web-secret-0123456789abcdefghij', display_name: 'Web shop',
  grant_types: ['authorization_code'], scopes: ['openid'], redirect_uris: [REDIRECT], require_consent: false,
};
const USER = { username: 'olga', password: 'her long and old password 3', email: 'olga@example.com', email_verified: true };

async function signInPage(browser: Browser, base: string): Promise<Page> {
  const { page } = await beginAuthorization(browser, base, 'web', REDIRECT);
  expect(isSignInPage(page), page.body.slice(0, 300)).toBe(true);
  return page;
}

describe('forgot password, with the clock moved', () => {
  let app: InProcessApp;
  let now = Date.now();
  beforeAll(async () => {
    app = await startInProcess({ seed: { api_scopes: [], clients: [CLIENT], users: [USER] }, env: { LOG_LEVEL: 'info' }, clock: () => now });
  });
  afterAll(async () => {
    await app?.close();
  });

  /** The codes mailed so far (the log mailer's lines), oldest first (this app's random host may hold 8 digits too). */
  const codes = () => app.logs().split('\n').filter((l) => l.includes('"mail":true') && l.includes('reset code'))
    .map((l) => /Your code: (\d{8})\b/.exec((JSON.parse(l) as { text: string }).text)?.[1] ?? '');

  async function recovery(browser: Browser): Promise<{ form: Page; code: string }> {
    const before = codes().length;
    const form = await askForCode(browser, await signInPage(browser, app.base), USER.email);
    expect(isCodeForm(form)).toBe(true);
    // The log mailer writes after the answer (setImmediate): the next turn of the loop.
    await new Promise((resolve) => setImmediate(resolve));
    const all = codes();
    expect(all).toHaveLength(before + 1);
    return { form, code: all[before] ?? '' };
  }

  it('a code is good for 15 minutes; after, it is refused and a new one must be asked for', async () => {
    const late = new Browser();
    const expired = await recovery(late);
    now += 15 * 60_000 + 1000;
    expect(alertOf(await enterCode(late, expired.form, expired.code))).toMatch(/has expired/);

    const browser = new Browser();
    const { form, code } = await recovery(browser);
    // The sign-in page's own request was kept 10 minutes: the code, at 14:59, still leads back to it.
    now += 15 * 60_000 - 1000;
    const next = await browser.follow(await enterCode(browser, form, code), app.base);
    expect(formTo(next, 'password'), next.body.slice(0, 300)).toBe(true);
    const { action, fields } = readForm(next.body, next.url);
    const newPassword = 'a new password after a long while 8';
    // Signed in with the new password: the request goes on.
    const done = await browser.follow(await browser.post(action, { ...fields, new_password: newPassword, confirm_password: newPassword }), app.base);
    expect(done.location?.startsWith(`${REDIRECT}?code=`), done.body.slice(0, 300)).toBe(true);
  });
});

describe('forgot password, from one address', () => {
  let app: InProcessApp;
  beforeAll(async () => {
    app = await startInProcess({ seed: { api_scopes: [], clients: [CLIENT], users: [USER] }, env: { IDP_AUTHORIZE_RATE_LIMIT: '3' } });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('asks for codes at most IDP_AUTHORIZE_RATE_LIMIT times a minute', async () => {
    const browser = new Browser();
    const page = await signInPage(browser, app.base);
    const form = await browser.get(forgotLink(page) ?? '');
    const { action, fields } = readForm(form.body, form.url);
    // The four in one minute's window.
    await roomInRateWindow(5);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await browser.post(action, { ...fields, identifier: `someone-${i}` }));
    expect(answers.slice(0, 3).map((a) => isCodeForm(a))).toEqual([true, true, true]);
    expect(answers[3]?.status).toBe(429);
    expect(answers[3]?.body).toContain('slow_down');
  });
});

describe('forgot password with a directory as the sign-in source', () => {
  let app: InProcessApp;
  beforeAll(async () => {
    app = await startInProcess({
      seed: { api_scopes: [], clients: [CLIENT], users: [] },
      env: {
        IDP_SIGN_IN_SOURCE: 'ldap', IDP_LDAP_URL: 'ldap://127.0.0.1:9', IDP_LDAP_BASE_DN: 'dc=example,dc=com',
        IDP_PASSWORD_RESET_URL: 'https://password.example.com/reset?from=idp',
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('links "Forgot password?" to IDP_PASSWORD_RESET_URL and offers no recovery of its own', async () => {
    const page = await signInPage(new Browser(), app.base);
    expect(forgotLink(page)).toBe('https://password.example.com/reset?from=idp');
    const own = await new Browser().get(`${app.base}/account/recover`);
    expect(own.status).toBe(404);
    expect(own.body).toContain('Passwords cannot be reset here');
    const posted = await new Browser().post(`${app.base}/account/recover/code`, { recovery: 'x', code: '12345678' });
    expect(posted.status).toBe(404);
  });

  it('IDP_PASSWORD_RESET_URL must be an http(s) URL', () => {
    const parsed = parseConfig({ IDP_PASSWORD_RESET_URL: 'javascript:alert(1)' });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(/IDP_PASSWORD_RESET_URL must be a URL starting with https:\/\/ or http:\/\//);
    const unset = parseConfig({});
    expect(unset.ok && unset.config.passwordResetUrl).toBeUndefined();
  });
});
