/**
 * A user's second factors on the account page, from outside: an `idp serve` on a PostgreSQL
 * database of its own, driven by a cookie-jar browser over HTTP and the `idp` command. The last
 * authenticator app or passkey is never removed (alone, or in a concurrent burst of removals of
 * the last two); an administrator's `must_enrol_mfa` stays after enrolment, and `idp users
 * reset-mfa` still takes every factor; recovery codes are refused without a factor; a factor
 * added on the account page does not make the session's sign-in a two-factor one.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputWhen } from '../helpers/process.ts';
import { sleep } from '../helpers/relying-party.ts';
import { postgresAvailable } from '../helpers/services.ts';
import {
  AddressedBrowser, WEB_REDIRECT, alertText, awayFromStepEnd, codeOf, decodeJwt, describePage, expectKind, nowSeconds, recoveryCodesOf, redeem,
  signIn, startAuthorization, startStack, submit, totp, type Page, type SeedUser, type Stack,
} from './account-support.ts';

const SECRET = 'JBSWY3DPEHPK3PXP';
const sfx = randomBytes(3).toString('hex');
const user = (name: string, extra: Partial<SeedUser> = {}): SeedUser => ({ username: `${name}-${sfx}`, password: `${name} keeps a long password 7`, ...extra });

const APP_ONLY = user('abe', { totp_secret: SECRET });
const TWO_FACTORS = user('bea', { totp_secret: SECRET });
const REQUIRED = user('cid', { must_enrol_mfa: true });
const NO_FACTOR = user('dot');
const ADDS_APP = user('eli');

const LAST_FACTOR = 'This is your last second factor';

describe.runIf(postgresAvailable)('second factors on the account page (PostgreSQL)', () => {
  let stack: Stack;
  let base = '';

  beforeAll(async () => {
    stack = await startStack([APP_ONLY, TWO_FACTORS, REQUIRED, NO_FACTOR, ADDS_APP], { IDP_TRUST_PROXY: 'true', LOG_LEVEL: 'info' });
    base = stack.servers[0]?.url ?? '';
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const accountUrl = () => `${base}/account`;
  const isAccountPage = (page: Page) => page.status === 200 && page.body.includes('<h1>Your account</h1>');
  const csrfOf = (page: Page) => /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const post = (browser: AddressedBrowser, path: string, form: Record<string, string>) => browser.post(`${accountUrl()}${path}`, form);
  const userId = async (u: SeedUser) => (await stack.sql<{ id: string }>('SELECT id FROM users WHERE username = $1', [u.username]))[0]?.id ?? '';
  const factorKinds = async (u: SeedUser) =>
    (await stack.sql<{ kind: string }>('SELECT f.kind FROM user_factors f JOIN users u ON u.id = f.user_id WHERE u.username = $1 ORDER BY f.kind', [u.username])).map((r) => r.kind);
  const standing = async (u: SeedUser) => (await factorKinds(u)).filter((kind) => kind !== 'recovery_code');
  /** The user's `mfa_removed` audit lines, once `expected` of them are written (or as many as there are then). */
  const removalsOf = async (u: SeedUser, expected: number) => {
    const id = await userId(u);
    const count = (output: string) => output.split('\n').filter((l) => l.includes('"event":"mfa_removed"') && l.includes(id)).length;
    return count(await outputWhen(stack.servers[0]!, (output) => count(output) >= expected));
  };

  /** Signs in at the account page with the password (and the app's code, `secret`), and shows the page. */
  async function atAccountPage(u: SeedUser, secret?: string, at = nowSeconds()): Promise<{ browser: AddressedBrowser; page: Page }> {
    const browser = new AddressedBrowser();
    let page = await signIn(browser, await browser.follow(await browser.get(accountUrl()), base), base, u.username, u.password);
    if (secret) page = await submit(browser, page, base, { otp: await totp(secret, at) });
    expect(isAccountPage(page), describePage(page)).toBe(true);
    return { browser, page };
  }

  it('refuses to remove the last authenticator app, as it refuses the last passkey', async () => {
    await awayFromStepEnd();
    const { browser, page } = await atAccountPage(APP_ONLY, SECRET);
    const refused = await post(browser, '/totp/remove', { csrf_token: csrfOf(page) });
    expect(refused.status, describePage(refused)).toBe(400);
    expect(alertText(refused)).toContain(LAST_FACTOR);
    expect(await factorKinds(APP_ONLY)).toEqual(['totp']);
    expect(await removalsOf(APP_ONLY, 0)).toBe(0);
  });

  it('of a burst of concurrent removals of the last two factors (app and passkey), takes one and keeps one', async () => {
    const id = await userId(TWO_FACTORS);
    const [passkey] = await stack.sql<{ id: string }>(
      `INSERT INTO user_factors (user_id, kind, name, credential_id, public_key, sign_count) VALUES ($1, 'passkey', 'Desk key', $2, 'pQECAyYgASFYIA', 0) RETURNING id`,
      [id, randomBytes(16).toString('base64url')],
    );
    await awayFromStepEnd();
    const { browser, page } = await atAccountPage(TWO_FACTORS, SECRET);
    const csrf = csrfOf(page);
    // The app's removals a moment behind the passkey's: each kind is then asked while the other may be gone.
    const removeApp = async () => (await sleep(40), post(browser, '/totp/remove', { csrf_token: csrf }));
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      (i % 2 === 0 ? post(browser, '/passkeys/remove', { csrf_token: csrf, passkey_id: passkey?.id ?? '' }) : removeApp())));
    expect(answers.map((a) => a.status).filter((s) => s !== 303 && s !== 400)).toEqual([]);
    expect(await standing(TWO_FACTORS)).toHaveLength(1);
    expect(await removalsOf(TWO_FACTORS, 1)).toBe(1);
    // The one left is the last: removing it is refused, whichever it is.
    const left = await browser.get(accountUrl());
    const again = (await standing(TWO_FACTORS))[0] === 'totp'
      ? await post(browser, '/totp/remove', { csrf_token: csrf })
      : await post(browser, '/passkeys/remove', { csrf_token: csrf, passkey_id: passkey?.id ?? '' });
    expect(isAccountPage(left)).toBe(true);
    expect(again.status).toBe(400);
    expect(await standing(TWO_FACTORS)).toHaveLength(1);
  });

  it('keeps an administrator\'s must_enrol_mfa after enrolment (which counts as the sign-in\'s second factor); reset-mfa still takes every factor', async () => {
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, base);
    const enrol = await signIn(browser, started.page, base, REQUIRED.username, REQUIRED.password);
    expectKind(enrol, 'enrol');
    const secret = (/<code>([^<]*)<\/code>/.exec(enrol.body)?.[1] ?? '').replace(/\s+/g, '');
    await awayFromStepEnd();
    const codes = await submit(browser, enrol, base, { otp: await totp(secret, nowSeconds()) });
    expect(recoveryCodesOf(codes)).toHaveLength(10);
    const done = await submit(browser, codes, base, {});
    const answer = await redeem(base, codeOf(done, started.state), started.verifier);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    // The new app's code was entered in this sign-in, before the session was made.
    expect(decodeJwt(answer.body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
    const flag = async () => (await stack.sql<{ flag: boolean }>('SELECT must_enrol_mfa AS flag FROM users WHERE username = $1', [REQUIRED.username]))[0]?.flag;
    expect(await flag()).toBe(true);

    // The session is a complete sign-in: the account page opens; the app, the only factor, stays.
    const page = await browser.follow(await browser.get(accountUrl()), base);
    expect(isAccountPage(page), describePage(page)).toBe(true);
    const refused = await post(browser, '/totp/remove', { csrf_token: csrfOf(page) });
    expect(alertText(refused)).toContain(LAST_FACTOR);
    expect(await factorKinds(REQUIRED)).toEqual(['recovery_code', 'recovery_code', 'recovery_code', 'recovery_code', 'recovery_code', 'recovery_code', 'recovery_code', 'recovery_code', 'recovery_code', 'recovery_code', 'totp']);

    // An administrator's reset takes them all, and the next sign-in enrols again.
    await stack.idpOk(['users', 'reset-mfa', REQUIRED.username]);
    expect(await factorKinds(REQUIRED)).toEqual([]);
    expect(await flag()).toBe(true);
    const next = new AddressedBrowser();
    const again = await startAuthorization(next, base);
    expectKind(await signIn(next, again.page, base, REQUIRED.username, REQUIRED.password), 'enrol');
  });

  it('refuses new recovery codes to a user without an app or passkey, storing none', async () => {
    const { browser, page } = await atAccountPage(NO_FACTOR);
    const refused = await post(browser, '/recovery-codes', { csrf_token: csrfOf(page) });
    expect(refused.status, describePage(refused)).toBe(400);
    expect(alertText(refused)).toContain('Recovery codes come with a second factor');
    expect(recoveryCodesOf(refused)).toEqual([]);
    expect(await factorKinds(NO_FACTOR)).toEqual([]);
    // Sign-in still asks for the password alone.
    await atAccountPage(NO_FACTOR);
  });

  it('leaves the session\'s amr as it signed in when an app is added on the account page; the next sign-in with it gives mfa', async () => {
    const browser = new AddressedBrowser();
    const first = await startAuthorization(browser, base);
    const signedIn = await signIn(browser, first.page, base, ADDS_APP.username, ADDS_APP.password);
    expect(decodeJwt((await redeem(base, codeOf(signedIn, first.state), first.verifier)).body.id_token).payload.amr).toEqual(['pwd']);

    const page = await browser.follow(await browser.get(accountUrl()), base);
    const setUp = await post(browser, '/totp', { csrf_token: csrfOf(page) });
    const secret = (/<p class="secret"><code>([^<]+)<\/code>/.exec(setUp.body)?.[1] ?? '').replace(/\s+/g, '');
    await awayFromStepEnd();
    const codes = await submit(browser, setUp, base, { otp: await totp(secret, nowSeconds()) });
    expect(recoveryCodesOf(codes)).toHaveLength(10);
    expect(await standing(ADDS_APP)).toEqual(['totp']);

    // Silently, the session gives no code (and so no acr mfa): its sign-in used the password alone.
    const none = await browser.get(`${base}/connect/authorize?${new URLSearchParams({
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid', prompt: 'none', state: 's1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    })}`);
    const params = new URL(none.location ?? base).searchParams;
    expect(params.get('code')).toBeNull();
    expect(params.get('error')).toBe('interaction_required');

    // "Continue" on the codes page signs in again, now with the app, and comes back with the notice.
    const back = await submit(browser, codes, base, {});
    expectKind(back, 'sign-in');
    const otp = await signIn(browser, back, base, ADDS_APP.username, ADDS_APP.password);
    expectKind(otp, 'otp');
    const account = await submit(browser, otp, base, { otp: await totp(secret, nowSeconds() + 30) });
    expect(isAccountPage(account), describePage(account)).toBe(true);
    expect(account.body).toContain('The authenticator app is set up.');
    const next = await startAuthorization(browser, base);
    expect(decodeJwt((await redeem(base, codeOf(next.page, next.state), next.verifier)).body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
  });
});
