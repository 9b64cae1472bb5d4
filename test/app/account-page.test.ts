/**
 * The account page (/account) from outside the app in this process, as a browser without
 * JavaScript uses it: the sign-in pages first and back; every form refused without its CSRF
 * token or with another one (nothing changes); a security change after more than 5 minutes since
 * the sign-in sends the browser to sign in again (the clock is moved), and works after; the
 * authenticator app set up, asked for by a new sign-in, and kept as the last second factor; email verification by the mailed code (read from the log
 * mailer's line), which 5 wrong tries void.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, readForm, type Page } from '../helpers/browser-http.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';
import { totp } from '../helpers/totp.ts';

const CAROL = { username: 'carol', password: 'she keeps bees in the garden 9' };
const NEW_PASSWORD = 'a brand new sentence for her 31';
const SEED = {
  api_scopes: [],
  clients: [],
  users: [{ ...CAROL, given_name: 'Carol', family_name: 'Kline', name: 'Carol Kline', email: 'carol@example.com', email_verified: false, roles: ['gardener'] }],
};

let offsetMs = 0;
const clock = () => Date.now() + offsetMs;
const serverSeconds = () => Math.floor(clock() / 1000);

let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcess({ seed: SEED, clock, env: { LOG_LEVEL: 'info', IDP_BRAND_NAME: 'Wonderland' } });
});
afterAll(async () => {
  await app?.close();
});

const accountUrl = () => `${app.base}/account`;
const isAccountPage = (page: Page) => page.status === 200 && page.body.includes('<h1>Your account</h1>');

/** The sign-in page's form, filled in and posted; the pages followed to the end. */
async function signIn(browser: Browser, page: Page, user = CAROL): Promise<Page> {
  expect(page.body, page.body.slice(0, 300)).toContain('name="password"');
  const { action, fields } = readForm(page.body, page.url);
  return browser.follow(await browser.post(action, { ...fields, ...user }), app.base);
}

async function signedInBrowser(): Promise<{ browser: Browser; page: Page }> {
  const browser = new Browser();
  const first = await browser.follow(await browser.get(accountUrl()), app.base);
  expect(first.body).toContain('your account');
  const page = await signIn(browser, first);
  expect(isAccountPage(page), page.body.slice(0, 500)).toBe(true);
  return { browser, page };
}

const csrfOf = (page: Page) => /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
const post = (browser: Browser, path: string, form: Record<string, string>) => browser.post(`${accountUrl()}${path}`, form);
const userRow = async () => (await app.sql<{ email_verified: boolean; password_hash: string }>('SELECT email_verified, password_hash FROM users WHERE username = $1', ['carol']))[0];
const codesOf = (html: string) => [...html.matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map((m) => m[1] ?? '');

/** Whether a new browser signs in with the password and `code` as the second factor. */
async function recoveryCodeSignIn(code: string): Promise<boolean> {
  const browser = new Browser();
  const otpPage = await signIn(browser, await browser.follow(await browser.get(accountUrl()), app.base));
  const link = /href="([^"]*\/recovery)"/.exec(otpPage.body)?.[1];
  expect(link, otpPage.body.slice(0, 400)).toBeTruthy();
  const form = await browser.get(new URL(link ?? '', app.base).href);
  const { action, fields } = readForm(form.body, form.url);
  return isAccountPage(await browser.follow(await browser.post(action, { ...fields, recovery_code: code }), app.base));
}
const factorCount = async () => Number((await app.sql<{ n: string }>("SELECT count(*) AS n FROM user_factors WHERE kind = 'totp'"))[0]?.n);

describe('the account page', () => {
  it('signs the browser in through the sign-in pages, then shows the profile', async () => {
    const { page } = await signedInBrowser();
    for (const text of ['Carol Kline', 'carol@example.com', 'gardener', 'Change password', 'Set up authenticator app', 'Verify email']) expect(page.body).toContain(text);
    expect(page.headers.get('cache-control')).toBe('no-store');
    // The base URL's host is a domain name: "Add a passkey" is offered, and this page alone runs the service's script.
    expect(page.headers.get('content-security-policy')).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(page.body).toContain('name="passkey_name"');
    expect(page.body).toContain('No passkey yet.');
  });

  it('refuses every form without its CSRF token or with another session\'s, and changes nothing', async () => {
    const { browser } = await signedInBrowser();
    const other = await signedInBrowser();
    const before = await userRow();
    const forms: Array<[string, Record<string, string>]> = [
      ['/password', { current_password: CAROL.password, new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }],
      ['/totp', {}], ['/totp/confirm', { enrolment: 'x', otp: '123456' }], ['/totp/remove', {}],
      ['/email/send', {}], ['/email/verify', { code: '12345678' }],
      ['/applications/remove', { client_id: 'any' }], ['/sessions/end-others', {}], ['/recovery-codes', {}], ['/continue/totp-added', {}],
      ['/passkeys', { passkey_name: 'Laptop', passkey_response: '{}' }], ['/passkeys/rename', { passkey_id: 'any', name: 'Laptop' }],
      ['/passkeys/remove', { passkey_id: 'any' }], ['/continue/passkey-added', {}],
    ];
    for (const [path, form] of forms) {
      for (const csrf of [{}, { csrf_token: 'wrong' }, { csrf_token: csrfOf(other.page) }] as Array<Record<string, string>>) {
        const answer = await post(browser, path, { ...form, ...csrf });
        expect(answer.status, `${path} ${JSON.stringify(csrf)}`).toBe(400);
        expect(answer.body).toContain('invalid_request');
      }
    }
    expect(await userRow()).toStrictEqual(before);
    expect(app.logs()).not.toContain('"mail":true');
    // The other browser is still signed in.
    expect(isAccountPage(await other.browser.get(accountUrl()))).toBe(true);
  });

  it('sends a security change more than 5 minutes after the sign-in to confirm it is the user (saying why, the account fixed), then back to that change', async () => {
    const { browser, page } = await signedInBrowser();
    offsetMs += 6 * 60 * 1000;
    const stale = await browser.get(accountUrl());
    expect(stale.body).toContain("asked to confirm it's you first");
    const before = await userRow();
    const change = { csrf_token: csrfOf(page), current_password: CAROL.password, new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD };
    const answer = await post(browser, '/password', change);
    expect(answer.status).toBe(303);
    expect(answer.location).toBe(`${accountUrl()}/sign-in-again?for=password`);
    expect(await userRow()).toStrictEqual(before);
    // The password is asked again although the session is signed in, then back to the page.
    // The passkey forms too: to sign in again first, before anything is looked at.
    for (const [path, form, action] of [['/passkeys', { passkey_name: 'Laptop', passkey_response: '{}' }, 'passkeys'], ['/passkeys/rename', { passkey_id: 'any', name: 'Laptop' }, 'passkey-rename'], ['/passkeys/remove', { passkey_id: 'any' }, 'passkey-remove']] as const) {
      const stalePasskey = await post(browser, path, { csrf_token: csrfOf(page), ...form });
      expect(stalePasskey.status, path).toBe(303);
      expect(stalePasskey.location).toBe(`${accountUrl()}/sign-in-again?for=${action}`);
    }
    // The page says why, and the account is the signed-in one: another name typed changes nothing.
    const confirmPage = await browser.follow(answer, app.base);
    expect(confirmPage.body).toContain("Confirm it&#39;s you to change your password.");
    expect(confirmPage.body).toMatch(/name="username" type="text" value="carol"[^>]*readonly/);
    const again = await signIn(browser, confirmPage, { ...CAROL, username: 'someone-else' });
    expect(isAccountPage(again), again.body.slice(0, 300)).toBe(true);
    expect(again.url).toBe(`${accountUrl()}?confirmed=password`);
    expect(again.body).toMatch(/<p class="notice" role="status" id="password-notice" tabindex="-1" autofocus>Thank you, it&#39;s you. You can now change your password.<\/p>/);
    expect(again.body).not.toContain('asked to confirm');
    // Now the passkey forms are read: a passkey that is not the user's is refused on the page.
    for (const [path, form] of [['/passkeys/rename', { passkey_id: 'any', name: 'Laptop' }], ['/passkeys/remove', { passkey_id: 'any' }]] as const) {
      const read = await post(browser, path, { csrf_token: csrfOf(again), ...form });
      expect(read.status, path).toBe(400);
      expect(read.body).toContain('That passkey is not one of yours');
    }
    const refused = await post(browser, '/password', { ...change, csrf_token: csrfOf(again), current_password: 'not the password at all' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('The current password is not right.');
    const done = await browser.follow(await post(browser, '/password', { ...change, csrf_token: csrfOf(again) }), app.base);
    expect(done.body).toContain('Your password was changed.');
    expect((await userRow())?.password_hash).not.toBe(before?.password_hash);
    expect(app.logs()).toContain('"event":"password_changed"');
    expect(app.logs()).toContain('Your password was changed');
    // Back to the first password, for the other tests.
    const back = await post(browser, '/password', { csrf_token: csrfOf(again), current_password: NEW_PASSWORD, new_password: CAROL.password, confirm_password: CAROL.password });
    expect(back.status).toBe(303);
  });

  it('sets the authenticator app up with its first code (recovery codes shown once), asks for it by a new sign-in, renews the codes, and keeps it as the last factor', async () => {
    const { browser, page } = await signedInBrowser();
    expect(page.body).toContain('Recovery codes come with a second factor');
    const setUp = await post(browser, '/totp', { csrf_token: csrfOf(page) });
    expect(setUp.status).toBe(200);
    expect(setUp.body).toContain('QR code');
    expect(setUp.headers.get('content-security-policy')).not.toContain('script-src');
    // The app lists the account under the brand's name, not the host.
    expect(setUp.body).toContain('<strong class="issuer-name">Wonderland</strong>');
    expect(setUp.body).toMatch(/otpauth:\/\/totp\/Wonderland:[^"]*issuer=Wonderland/);
    const secret = (/<p class="secret"><code>([^<]+)<\/code>/.exec(setUp.body)?.[1] ?? '').replace(/\s+/g, '');
    const { action, fields } = readForm(setUp.body, setUp.url);
    const wrong = await browser.post(action, { ...fields, otp: '000000' === (await totp(secret, serverSeconds())) ? '111111' : '000000' });
    expect(wrong.status).toBe(400);
    expect(await factorCount()).toBe(0);
    const codesPage = await browser.post(action, { ...fields, otp: await totp(secret, serverSeconds()) });
    const first = codesOf(codesPage.body);
    expect(first).toHaveLength(10);
    expect(await factorCount()).toBe(1);
    expect(app.logs()).toContain('"event":"mfa_added"');
    // This session signed in with the password alone: "Continue" asks for the app, by a new sign-in.
    const continued = readForm(codesPage.body, codesPage.url);
    const otpPage = await signIn(browser, await browser.follow(await browser.post(continued.action, continued.fields), app.base));
    const otpForm = readForm(otpPage.body, otpPage.url);
    const added = await browser.follow(await browser.post(otpForm.action, { ...otpForm.fields, otp: await totp(secret, serverSeconds() + 30) }), app.base);
    expect(added.body).toContain('The authenticator app is set up.');
    expect(added.body).toContain('10 of 10 recovery codes left.');

    // "Generate new codes": a new set, shown once; the old set no longer signs in.
    const renewed = await post(browser, '/recovery-codes', { csrf_token: csrfOf(added) });
    const second = codesOf(renewed.body);
    expect(second).toHaveLength(10);
    expect(second.some((code) => first.includes(code))).toBe(false);
    expect(app.logs()).toContain('"event":"recovery_codes_generated"');
    expect(await recoveryCodeSignIn(first[0] ?? '')).toBe(false);
    expect(await recoveryCodeSignIn(second[0] ?? '')).toBe(true);
    expect((await browser.get(accountUrl())).body).toContain('9 of 10 recovery codes left.');

    // The last second factor stays.
    const kept = await post(browser, '/totp/remove', { csrf_token: csrfOf(added) });
    expect(kept.status).toBe(400);
    expect(kept.body).toContain('This is your last second factor');
    expect(await factorCount()).toBe(1);
    expect(app.logs()).not.toContain('"event":"mfa_removed"');
    // An administrator takes it (the other tests sign in with the password alone).
    await app.sql('DELETE FROM user_factors');
  });

  it('verifies the email address with the mailed code; wrong tries void it', async () => {
    const { browser, page } = await signedInBrowser();
    const codes = () => [...app.logs().matchAll(/"mail":true[^\n]*?Your code: (\d{8})/g)].map((m) => m[1]);
    const sent = await browser.follow(await post(browser, '/email/send', { csrf_token: csrfOf(page) }), app.base);
    expect(sent.body).toContain('We sent a code');
    const first = codes().at(-1) ?? '';
    expect(first).toMatch(/^\d{8}$/);
    for (let i = 0; i < 5; i++) expect((await post(browser, '/email/verify', { csrf_token: csrfOf(page), code: '00000000' })).status).toBe(400);
    const voided = await post(browser, '/email/verify', { csrf_token: csrfOf(page), code: first });
    expect(voided.body).toContain('No code is waiting');
    expect((await userRow())?.email_verified).toBe(false);
    await post(browser, '/email/send', { csrf_token: csrfOf(page) });
    const second = codes().at(-1) ?? '';
    // The mailed link opens the page with the code filled in, and consumes nothing.
    const linked = await browser.get(`${accountUrl()}?email_code=${second}`);
    expect(linked.body).toContain(`value="${second}"`);
    const verified = await browser.follow(await post(browser, '/email/verify', { csrf_token: csrfOf(page), code: second }), app.base);
    expect(verified.body).toContain('Your email address is verified.');
    expect((await userRow())?.email_verified).toBe(true);
    const replayed = await post(browser, '/email/verify', { csrf_token: csrfOf(page), code: second });
    expect(replayed.status).toBe(400);
    expect(replayed.body).toContain('No code is waiting');
  });
});

describe('starting the account page\'s sign-in', () => {
  let limited: InProcessApp;
  beforeAll(async () => {
    limited = await startInProcess({ seed: SEED, env: { IDP_AUTHORIZE_RATE_LIMIT: '3' } });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('counts against the authorize budget of the source address: a flood of visits stores no flood of sign-ins', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await new Browser().get(`${limited.base}/account`)).status);
    expect(statuses.slice(0, 3)).toStrictEqual([303, 303, 303]);
    // Ten in a row span at most two of the one-minute windows: some are refused.
    expect(statuses.slice(3)).toContain(429);
  });
});
