/**
 * Shared by the second-factor and account-protection e2e suites: servers started as `idp serve`
 * processes on a PostgreSQL database of their own (optionally several instances on one database
 * and one Redis), a seed, and helpers that drive the sign-in pages (password, second factor,
 * enrolment, password change) and the token endpoint from outside, as a browser and a relying
 * party would. Each browser can present its own client address (X-Forwarded-For, with
 * IDP_TRUST_PROXY=true), so per-address throttling of one test does not leak into the next.
 */
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { runIdp, seedWith, startServer, type RunResult, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, runSql, type TestDatabase } from '../helpers/services.ts';
import { basic, pkce, type Pkce } from '../helpers/oauth.ts';
import {
  Browser, beginAuthorization, formTo, isSignInPage, readForm, redeem as redeemCode, refresh as refreshAt, token,
  type Begun, type ClientCredentials, type HttpResponse, type Page,
} from '../helpers/relying-party.ts';

export { basic, pkce, type Pkce };
export { Browser, decodeJwt, isSignInPage, readForm, type Page } from '../helpers/relying-party.ts';
export { awayFromStepEnd, nowSeconds, totp } from '../helpers/totp.ts';

export const IDP_SECRET = 'a1'.repeat(32);
export const WEB_SECRET = 'mfa-web-secret-0123456789abcdefghijklmn';
export const WEB_REDIRECT = 'https://rp.test/cb';
const WEB: ClientCredentials = { clientId: 'web', secret: WEB_SECRET };
export const THROTTLED_TEXT = 'Too many failed attempts';
/** The account is closed to unrecognised devices (IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT). */
export const UNRECOGNISED_TEXT = 'Too many attempts for this account from unrecognised devices';

export interface SeedUser {
  username: string;
  password: string;
  totp_secret?: string;
  must_enrol_mfa?: boolean;
  must_change_password?: boolean;
  locked?: boolean;
  email?: string;
}

export function seedFor(users: SeedUser[]) {
  return {
    api_scopes: [],
    clients: [{
      client_id: 'web', client_secret: WEB_SECRET, display_name: 'Web shop',
      grant_types: ['authorization_code', 'refresh_token'],
      scopes: ['openid', 'profile', 'offline_access'],
      redirect_uris: [WEB_REDIRECT], require_consent: false,
    }],
    users: users.map((u) => ({ ...u, name: u.username, given_name: u.username })),
  };
}

export interface Stack {
  db: TestDatabase;
  servers: RunningServer[];
  /** Environment for `idp` commands on this database. */
  env: Record<string, string>;
  idp(args: string[]): Promise<RunResult>;
  /** Runs `idp ARGS` and fails the test unless it exits 0. */
  idpOk(args: string[]): Promise<RunResult>;
  sql<T extends Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  stop(): Promise<void>;
}

/** A fresh database, seeded, and `instances` servers on it with `env` added. */
export async function startStack(users: SeedUser[], env: Record<string, string> = {}, instances = 1): Promise<Stack> {
  const db = await createTestDatabase();
  const base = { DATABASE_URL: db.url, IDP_SECRET };
  const servers: RunningServer[] = [];
  try {
    // The first server migrates the empty database; then the seed goes in, as an operator would do it.
    servers.push(await startServer({ ...base, ...env }));
    await seedWith(seedFor(users), base);
    for (let i = 1; i < instances; i++) servers.push(await startServer({ ...base, ...env }));
  } catch (error) {
    for (const s of servers) await s.stop();
    await db.drop();
    throw error;
  }
  const idp = (args: string[]) => runIdp(args, base);
  return {
    db,
    servers,
    env: base,
    idp,
    async idpOk(args) {
      const result = await idp(args);
      expect(result.code, `idp ${args.join(' ')}: ${result.stdout}${result.stderr}`).toBe(0);
      return result;
    },
    sql: (text, values = []) => runSql(db.url, text, values),
    async stop() {
      for (const s of servers) await s.stop();
      await db.drop();
    },
  };
}

const addressPrefix = `10.${randomBytes(1)[0] ?? 0}`;
let addressCount = 0;

/** A client address not handed out before in this test file (10.R.x.y, R random per file). */
export function nextAddress(): string {
  addressCount += 1;
  return `${addressPrefix}.${Math.floor(addressCount / 250) % 256}.${(addressCount % 250) + 1}`;
}

/** A cookie-jar browser that presents itself from `address` (honoured with IDP_TRUST_PROXY=true). */
export class AddressedBrowser extends Browser {
  address: string;
  constructor(address = nextAddress()) {
    super();
    this.address = address;
  }

  override request(url: string, init: RequestInit = {}): Promise<Page> {
    const headers = new Headers(init.headers);
    headers.set('x-forwarded-for', this.address);
    return super.request(url, { ...init, headers });
  }
}


export interface Started extends Begun {
  nonce: string;
}

/** Starts an authorization for `web` and follows it to the first page the service shows. */
export async function startAuthorization(browser: Browser, base: string, scope = 'openid offline_access'): Promise<Started> {
  const nonce = randomBytes(8).toString('hex');
  return { ...(await beginAuthorization(browser, base, 'web', WEB_REDIRECT, { scope, nonce })), nonce };
}

export const isOtpPage = (page: Page) =>
  page.status === 200 && formTo(page, 'otp') && page.body.includes('name="otp"') && page.body.includes('Authentication code');
export const isEnrolPage = (page: Page) =>
  page.status === 200 && formTo(page, 'enrol') && page.body.includes('name="otp"') && page.body.includes('Authentication code');
export const isPasswordPage = (page: Page) =>
  page.status === 200 && formTo(page, 'password') && page.body.includes('name="new_password"') && page.body.includes('name="confirm_password"');

/** The new recovery codes, shown once after enrolment, with "Continue". */
export const isRecoveryCodesPage = (page: Page) =>
  page.status === 200 && formTo(page, 'recovery-codes') && /<button[^>]*type="submit"[^>]*>Continue<\/button>/.test(page.body);
/** The second factor by recovery code. */
export const isRecoveryPage = (page: Page) =>
  page.status === 200 && formTo(page, 'recovery') && page.body.includes('name="recovery_code"') && page.body.includes('Recovery code');

/** The codes a recovery-codes page shows. */
export function recoveryCodesOf(page: Page): string[] {
  return [...page.body.matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map((m) => m[1] ?? '');
}

export type PageKind = 'sign-in' | 'otp' | 'recovery' | 'enrol' | 'recovery-codes' | 'password' | 'redirect' | 'other';

export function kindOf(page: Page): PageKind {
  if (page.status === 302 && page.location?.startsWith(`${WEB_REDIRECT}?`)) return 'redirect';
  if (isSignInPage(page)) return 'sign-in';
  if (isOtpPage(page)) return 'otp';
  if (isEnrolPage(page)) return 'enrol';
  if (isRecoveryPage(page)) return 'recovery';
  if (isRecoveryCodesPage(page)) return 'recovery-codes';
  if (isPasswordPage(page)) return 'password';
  return 'other';
}

/** What a page says in its alert (role="alert"), without markup; '' when there is none. */
export function alertText(page: Page): string {
  const alert = /<div[^>]*role="alert"[^>]*>([\s\S]*?)<\/div>/i.exec(page.body);
  return alert?.[1]?.replace(/<[^>]*>/g, ' ').replace(/&#39;/g, "'").replace(/\s+/g, ' ').trim() ?? '';
}

/** Short description of a page for assertion messages. */
export function describePage(page: Page): string {
  return `${page.status} ${kindOf(page)} ${page.location ?? ''} alert="${alertText(page)}" ${page.status === 200 ? '' : page.body.slice(0, 200)}`;
}

/** Posts the page's first form with its hidden inputs plus `fields`, and follows same-origin redirects. */
export async function submit(browser: Browser, page: Page, base: string, fields: Record<string, string>): Promise<Page> {
  const form = readForm(page.body, page.url);
  return browser.follow(await browser.post(form.action, { ...form.fields, ...fields }), base);
}

export const signIn = (browser: Browser, page: Page, base: string, username: string, password: string) =>
  submit(browser, page, base, { username, password });

export function expectKind(page: Page, kind: PageKind): void {
  expect(kindOf(page), describePage(page)).toBe(kind);
}

/** The code of a redirect to the client, after checking it carries no error. */
export function codeOf(page: Page, state: string): string {
  expectKind(page, 'redirect');
  const params = new URL(page.location ?? '').searchParams;
  expect(params.get('error'), params.get('error_description') ?? '').toBeNull();
  expect(params.get('state')).toBe(state);
  return params.get('code') ?? '';
}


/** A token request as the `web` client (Basic). */
export const tokenRequest = (base: string, form: Record<string, string>) => token(base, WEB, form);

export const redeem = (base: string, code: string, verifier: string) => redeemCode(base, code, WEB_REDIRECT, verifier, WEB);

export const refresh = (base: string, refreshToken: string) => refreshAt(base, WEB, refreshToken);

export function expectInvalidGrant(answer: HttpResponse): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body.error).toBe('invalid_grant');
  expect(answer.body.access_token).toBeUndefined();
}

/** Walks a full password-only sign-in and returns the token response (it must succeed). */
export async function passwordTokens(base: string, user: { username: string; password: string }, browser: Browser = new AddressedBrowser()): Promise<Record<string, unknown>> {
  const started = await startAuthorization(browser, base);
  expectKind(started.page, 'sign-in');
  const done = await signIn(browser, started.page, base, user.username, user.password);
  const answer = await redeem(base, codeOf(done, started.state), started.verifier);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

/** Runs `make(i)` for i from 0 to count - 1, at most `width` at a time; the results in order. */
export async function inBatches<T>(count: number, width: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += width) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(width, count - start) }, (_, j) => make(start + j)))));
  }
  return results;
}

/** A page and the browser (with its cookies) it was shown in, ready for its form to be posted. */
export interface OpenForm {
  browser: Browser;
  page: Page;
  base: string;
}

/**
 * Posts every form at once with `fields(i)` (a concurrent burst, as an attacker with many
 * interactions would send it) and sorts the answers: `judged` carry `wrong` in their alert (the
 * guess was checked and refused), `throttled` a lock's message (of a name or address, or of an
 * account closed to unrecognised devices); the rest are `other`, by index.
 */
export async function burst(forms: OpenForm[], fields: (i: number) => Record<string, string>, wrong: string) {
  const answers = await Promise.all(forms.map(({ browser, page, base }, i) => submit(browser, page, base, fields(i))));
  const locked = (a: Page) => alertText(a).includes(THROTTLED_TEXT) || alertText(a).includes(UNRECOGNISED_TEXT);
  const judged = answers.filter((a) => alertText(a).includes(wrong)).length;
  const throttled = answers.filter(locked).length;
  const other = answers.flatMap((a, i) => (alertText(a).includes(wrong) || locked(a) ? [] : [i]));
  return { answers, judged, throttled, other };
}

