/**
 * Signing an administrator into the administration console (/admin) as a browser without
 * JavaScript does: /admin sends it to the authorization endpoint, the sign-in pages take the
 * password and the authenticator code, the callback opens the console. For a test of a console
 * page: seed `consoleUser(...)` and call `signInToConsole`.
 */
import { expect } from 'vitest';
import { Browser, readForm, type Page } from './browser-http.ts';
import { totp } from './totp.ts';

/** The authenticator app's secret of every console test user (base32, 80 bits). */
export const CONSOLE_TOTP_SECRET = 'JBSWY3DPEHPK3PXP';

export interface ConsoleTestUser {
  username: string;
  password: string;
  roles: string[];
  /** Absent: a user without a second factor. */
  totp_secret?: string;
}

/** A seed file's user with a console role (idp-admin by default) and an authenticator app. */
export function consoleUser(username: string, roles: string[] = ['idp-admin'], options: { secondFactor?: boolean } = {}): ConsoleTestUser & Record<string, unknown> {
  return {
    username,
    password: 'the lighthouse keeper counts boats 42',
    roles,
    name: `${username[0]?.toUpperCase() ?? ''}${username.slice(1)} Admin`,
    email: `${username}@example.com`,
    email_verified: true,
    ...(options.secondFactor === false ? {} : { totp_secret: CONSOLE_TOTP_SECRET }),
  };
}

export interface ConsoleSignIn {
  browser: Browser;
  /** The console page the sign-in ended on. */
  page: Page;
}

/** Posts the first form of `page` with `fields` added, following redirects on `base`'s origin. */
export async function submit(browser: Browser, page: Page, fields: Record<string, string>, base: string): Promise<Page> {
  const form = readForm(page.body, page.url);
  return browser.follow(await browser.post(form.action, { ...form.fields, ...fields }), new URL(base).origin);
}

/**
 * Signs `user` in to the console at `base` through the service's own sign-in pages and returns
 * the browser (its cookie jar holds the console session) and the page it ended on (`path`, the
 * overview by default). `serverSeconds`: the service's clock, when the test moves it. A code
 * used already in this 30-second step (a second sign-in of the same user) is followed by the
 * next step's.
 */
export async function signInToConsole(base: string, user: ConsoleTestUser, options: { path?: string; serverSeconds?: () => number; browser?: Browser } = {}): Promise<ConsoleSignIn> {
  const origin = new URL(base).origin;
  const browser = options.browser ?? new Browser();
  const now = options.serverSeconds ?? (() => Math.floor(Date.now() / 1000));
  let page = await browser.follow(await browser.get(`${base}/admin${options.path ?? ''}`), origin);
  if (page.body.includes('name="password"')) page = await submit(browser, page, { username: user.username, password: user.password }, base);
  for (let step = 0; step < 3 && page.body.includes('name="otp"') && user.totp_secret; step++) {
    page = await submit(browser, page, { otp: await totp(user.totp_secret, now() + step * 30) }, base);
  }
  expect(page.url, page.body.slice(0, 600)).toContain('/admin');
  return { browser, page };
}

/** The CSRF token of the console page's forms. */
export const csrfOf = (page: Page) => /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
