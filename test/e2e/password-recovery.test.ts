/**
 * "Forgot password" from outside: two `idp serve` instances on one PostgreSQL database and a
 * Redis of their own, behind a load balancer (operations-support.ts), the mail read from their
 * log (the log mailer), the pages walked as a browser without JavaScript walks them. A recovery
 * from start to end (tokens and sessions from before ended, the new password signing in), the
 * second factor on the way, the limits of codes, guesses raced on both instances, a code for one
 * account against another's recovery, a replayed link, and CSRF.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../helpers/process.ts';
import { postgresAvailable } from '../helpers/services.ts';
import { AddressedBrowser, decodeJwt, expectKind, recoveryCodesOf, signIn, startAuthorization, submit } from './account-support.ts';
import {
  ALICE, Balancer, MIA, TOTP_SECRET, WEB_REDIRECT, WEB_SECRET, rawRequest, seedOf, startDeployment, startOwnRedis, webClient,
  type Deployment, type OwnRedis,
} from './operations-support.ts';
import { alertOf, askForCode, codeIn, enterCode, forgotLink, isCodeForm, linkIn, mailsIn, nthMailTo, withoutTokens } from './recovery-support.ts';
import { startSmtpServer, type SmtpCatcher } from '../helpers/smtp.ts';
import { awayFromStepEnd, nowSeconds, totp } from '../helpers/totp.ts';
import {
  Browser, authorize, beginAuthorization, formTo, isSignInPage, readForm, redeem, refresh, submitSignIn, type Page,
} from '../helpers/relying-party.ts';

const WEB = { clientId: 'web', secret: WEB_SECRET };
const user = (username: string) => ({ username, password: `the long old password of ${username.length} letters` });
const [BOB, CAROL, DAVE, FRANK, GINA, HANK, IVY, ERIN, JILL] = [
  user('bob'), user('carol'), user('dave'), user('frank'), user('gina'), user('hank'), user('ivy'), user('erin'), user('jill'),
] as const;
/** Recovers from a bookmark of the recovery page. */
const LEO = user('leo');
const NEW_PASSWORD = 'a brand new password for recovery 7';
/** Enrols at her first sign-in: an authenticator app and recovery codes. */
const KATE = { username: 'kate', password: 'the long old password of 4 letters', must_enrol_mfa: true };
const email = (u: { username: string }) => `${u.username}@example.com`;

describe.runIf(postgresAvailable)('forgot password', () => {
  let redis: OwnRedis;
  let lb: Balancer;
  let deployment: Deployment;
  let servers: RunningServer[];
  let A: RunningServer;
  let B: RunningServer;

  beforeAll(async () => {
    [redis, lb] = await Promise.all([startOwnRedis(), Balancer.start()]);
    deployment = await startDeployment({
      seed: seedOf([webClient('web')], [ALICE, MIA, BOB, CAROL, DAVE, FRANK, GINA, HANK, IVY, ERIN, JILL, KATE, LEO]),
      env: { IDP_BASE_URL: lb.url, REDIS_URL: redis.url, IDP_TRUST_PROXY: 'true', IDP_LOGIN_MAX_FAILURES_PER_ADDRESS: '8' },
      instances: 2,
    });
    servers = deployment.servers;
    [A, B] = servers as [RunningServer, RunningServer];
    lb.use(A);
  });
  afterAll(async () => {
    await deployment?.stop();
    await lb?.close();
    await redis?.stop();
  });

  const mailCount = (to: string) => mailsIn(servers).filter((m) => m.to === to && m.subject.includes('password reset code')).length;

  /** The PKCE verifier of the last sign-in page's authorization request. */
  let verifier = '';

  /** A sign-in page of a new authorization request, in `browser`. */
  async function signInPage(browser: Browser): Promise<Page> {
    const begun = await beginAuthorization(browser, lb.url, 'web', WEB_REDIRECT, { scope: 'openid offline_access' });
    expect(isSignInPage(begun.page), begun.page.body.slice(0, 300)).toBe(true);
    verifier = begun.verifier;
    return begun.page;
  }

  /** Asks for a code for `identifier` (of `who`) and returns the code form and the code mailed. */
  async function codeFor(browser: Browser, who: { username: string }, identifier = who.username) {
    const before = mailCount(email(who));
    const form = await askForCode(browser, await signInPage(browser), identifier);
    expect(isCodeForm(form), form.body.slice(0, 500)).toBe(true);
    const mail = await nthMailTo(servers, email(who), before + 1);
    return { form, mail, code: codeIn(mail), verifier };
  }

  /** The `amr` of the ID token the redirect's code is redeemed for (by the request of `verifier`). */
  async function amrOf(redirect: Page, pkceVerifier: string): Promise<unknown> {
    expect(redirect.location?.startsWith(`${WEB_REDIRECT}?code=`), redirect.location ?? redirect.body.slice(0, 300)).toBe(true);
    const code = new URL(redirect.location ?? '').searchParams.get('code') ?? '';
    const tokens = await redeem(lb.url, code, WEB_REDIRECT, pkceVerifier, WEB);
    expect(tokens.status, tokens.text).toBe(200);
    return decodeJwt(tokens.body.id_token).payload.amr;
  }

  it('recovers: the mailed link opens the filled-in form (consuming nothing), then the new password signs the browser in (amr pwd) and the request goes on; old tokens refused', async () => {
    // Before: a refresh token from a sign-in with the old password.
    const earlier = new Browser();
    const { code: authCode, verifier } = await authorize(earlier, lb.url, 'web', WEB_REDIRECT, ALICE, 'openid offline_access');
    const tokens = await redeem(lb.url, authCode, WEB_REDIRECT, verifier, WEB);
    expect(tokens.status, tokens.text).toBe(200);
    // That browser's session signs in without a page while it lasts.
    const silent = await beginAuthorization(earlier, lb.url, 'web', WEB_REDIRECT, { scope: 'openid' });
    expect(silent.page.location?.startsWith(`${WEB_REDIRECT}?code=`), silent.page.body.slice(0, 300)).toBe(true);

    const { mail, code, verifier: asked } = await codeFor(new Browser(), ALICE, 'Alice@Example.com');
    expect(mail.subject).toContain('password reset code');
    const link = linkIn(mail);
    expect(link.startsWith(`${lb.url}/account/recover/code?`)).toBe(true);

    // A mail scanner opens the link first, on the other instance: nothing is consumed.
    const phone = new Browser();
    lb.use(B);
    for (let i = 0; i < 2; i++) {
      const opened = await phone.get(link);
      expect(isCodeForm(opened), opened.body.slice(0, 300)).toBe(true);
      expect(opened.body).toContain(`value="${code}"`);
      expect(alertOf(opened)).toBeUndefined();
    }
    lb.use(A);
    const opened = await phone.get(link);
    const steps = await phone.follow(await enterCode(phone, opened, readForm(opened.body, opened.url).fields.code ?? code), lb.url);
    expect(formTo(steps, 'password'), steps.body.slice(0, 500)).toBe(true);
    expect(steps.body).toContain('Choose a new password for your account.');

    const { action, fields } = readForm(steps.body, steps.url);
    const shortOne = await phone.post(action, { ...fields, new_password: 'short', confirm_password: 'short' });
    expect(alertOf(shortOne)).toMatch(/at least 12 characters/);
    // Signed in with the new password: on with the authorization request, nothing typed again.
    const changed = await phone.follow(await phone.post(action, { ...fields, new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }), lb.url);
    expect(await amrOf(changed, asked)).toEqual(['pwd']);

    // The refresh token from before is refused; the old password no longer signs in.
    const refreshed = await refresh(lb.url, WEB, String(tokens.body.refresh_token));
    expect(refreshed.status, refreshed.text).toBe(400);
    expect(refreshed.body.error).toBe('invalid_grant');
    const other = new Browser();
    const withOld = await submitSignIn(other, await signInPage(other), ALICE);
    expect(alertOf(withOld)).toMatch(/username or password is incorrect/);
    // The session from before no longer signs in.
    const afterwards = await beginAuthorization(earlier, lb.url, 'web', WEB_REDIRECT, { scope: 'openid' });
    expect(isSignInPage(afterwards.page), afterwards.page.location ?? afterwards.page.body.slice(0, 300)).toBe(true);

    // The new password signs in.
    const signedIn = await other.follow(await submitSignIn(other, withOld, { username: 'alice', password: NEW_PASSWORD }), lb.url);
    expect(signedIn.status, signedIn.body.slice(0, 300)).toBe(302);
    expect(signedIn.location?.startsWith(`${WEB_REDIRECT}?code=`), signedIn.location).toBe(true);

    // The link, replayed: refused, on opening and on posting.
    const replay = new Browser();
    const again = await replay.get(link);
    expect(alertOf(again)).toMatch(/expired, was used already/);
    const reposted = await enterCode(replay, again, code);
    expect(reposted.status).toBe(200);
    expect(alertOf(reposted)).toMatch(/expired, was used already/);

    const notice = await nthMailTo(servers, email(ALICE), 1, 'Your password was changed');
    expect(notice.subject).toContain('Your password was changed');
    const lines = servers.flatMap((s) => s.output().split('\n')).filter((l) => !l.includes('"mail":true'));
    expect(lines.join('\n')).toMatch(/"event":"password_recovery_requested".*"result":"sent"/);
    expect(lines.join('\n')).toMatch(/"event":"password_changed".*"via":"recovery"/);
    // The code is in the mail only: in no other log line.
    expect(lines.filter((l) => l.includes(code))).toEqual([]);
  });

  it('asks for the second factor the user has before the new password', async () => {
    const browser = new Browser();
    const { form, code } = await codeFor(browser, MIA);
    const otpPage = await browser.follow(await enterCode(browser, form, code), lb.url);
    expect(formTo(otpPage, 'otp'), otpPage.body.slice(0, 500)).toBe(true);
    expect(otpPage.body).toContain('Authentication code');
    const { action, fields } = readForm(otpPage.body, otpPage.url);
    const wrong = await browser.post(action, { ...fields, otp: '000000' });
    expect(alertOf(wrong)).toMatch(/not right/);
    await awayFromStepEnd();
    const next = await browser.follow(await browser.post(action, { ...fields, otp: await totp(TOTP_SECRET, nowSeconds()) }), lb.url);
    expect(formTo(next, 'password'), next.body.slice(0, 500)).toBe(true);
  });

  it('takes a recovery code as the second factor, as a sign-in does, and signs in with amr pwd and mfa', async () => {
    // Kate enrols at her first sign-in and is shown her recovery codes.
    const enrolling = new Browser();
    const started = await startAuthorization(enrolling, lb.url);
    const enrol = await signIn(enrolling, started.page, lb.url, KATE.username, KATE.password);
    expectKind(enrol, 'enrol');
    const secret = (/<code>([^<]*)<\/code>/.exec(enrol.body)?.[1] ?? '').replace(/\s+/g, '');
    await awayFromStepEnd();
    const codes = recoveryCodesOf(await submit(enrolling, enrol, lb.url, { otp: await totp(secret, nowSeconds()) }));
    expect(codes).toHaveLength(10);

    const browser = new Browser();
    const { form, code, verifier: asked } = await codeFor(browser, KATE);
    const otpPage = await browser.follow(await enterCode(browser, form, code), lb.url);
    expectKind(otpPage, 'otp');
    const link = /<a href="([^"]*\/recovery)">Use a recovery code<\/a>/.exec(otpPage.body)?.[1] ?? '';
    const recoveryPage = await browser.follow(await browser.get(new URL(link.replace(/&#x2F;|&#47;/g, '/'), lb.url).href), lb.url);
    expectKind(recoveryPage, 'recovery');
    const next = await submit(browser, recoveryPage, lb.url, { recovery_code: codes[0] ?? '' });
    expect(formTo(next, 'password'), next.body.slice(0, 500)).toBe(true);
    const changed = await submit(browser, next, lb.url, { new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD });
    expect(await amrOf(changed, asked)).toEqual(['pwd', 'mfa']);
  });

  it('a new request voids the previous code; 5 wrong codes void a code; 5 messages an hour, the sixth request changing nothing', async () => {
    const browser = new Browser();
    const first = await codeFor(browser, CAROL);
    const second = await codeFor(browser, CAROL, email(CAROL));
    expect(alertOf(await enterCode(browser, first.form, first.code))).toMatch(/replaced by a newer one/);
    for (let i = 0; i < 5; i++) {
      const wrongCode = String((Number(second.code) + 1 + i) % 100_000_000).padStart(8, '0');
      expect(alertOf(await enterCode(browser, second.form, wrongCode))).toMatch(/That code is not right/);
    }
    expect(alertOf(await enterCode(browser, second.form, second.code))).toMatch(/Too many wrong codes/);

    const third = await codeFor(browser, CAROL);
    await codeFor(browser, CAROL);
    const fifth = await codeFor(browser, CAROL);
    expect(mailCount(email(CAROL))).toBe(5);
    const sixth = await askForCode(browser, await signInPage(browser), CAROL.username);
    expect(isCodeForm(sixth)).toBe(true);
    // Mail leaves in order on one instance: once a later message is out, a sixth would be too.
    await codeFor(browser, ERIN);
    expect(mailCount(email(CAROL))).toBe(5);
    expect(alertOf(await enterCode(browser, third.form, third.code))).toMatch(/replaced/);
    const onward = await enterCode(browser, fifth.form, fifth.code);
    expect(onward.status, onward.body.slice(0, 300)).toBe(303);
    expect(A.output() + B.output()).toMatch(/"event":"password_recovery_requested".*"result":"limited"/);

    // A name without an account behaves alike: the sixth request leaves the fifth form as it was,
    // and a new request within the limit voids the previous form.
    const nobody: Page[] = [];
    for (let i = 0; i < 6; i++) nobody.push(await askForCode(browser, await signInPage(browser), 'nobody-counted'));
    expect(alertOf(await enterCode(browser, nobody[4] as Page, '00000000'))).toMatch(/That code is not right/);
    expect(alertOf(await enterCode(browser, nobody[3] as Page, '00000000'))).toMatch(/replaced by a newer one/);
  });

  it('guesses raced on both instances: 5 are judged, the rest refused; a right code raced on both continues once', async () => {
    const browser = new Browser();
    const { form, code } = await codeFor(browser, DAVE);
    const { action, fields } = readForm(form.body, form.url);
    const post = (server: RunningServer, guess: string) => rawRequest(server.port, {
      method: 'POST', path: new URL(action).pathname, host: new URL(lb.url).host,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'x-forwarded-for': lb.freshAddress() },
      body: new URLSearchParams({ ...fields, code: guess }).toString(),
    });
    const wrong = (i: number) => String((Number(code) + 1 + i) % 100_000_000).padStart(8, '0');
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => post(i % 2 === 0 ? A : B, wrong(i))));
    const judged = answers.filter((a) => a.text.includes('That code is not right')).length;
    const refused = answers.filter((a) => a.text.includes('Too many wrong codes')).length;
    expect([judged, refused]).toEqual([5, 7]);
    expect((await post(B, code)).text).toContain('Too many wrong codes');

    const other = new Browser();
    const frank = await codeFor(other, FRANK);
    const fieldsOf = readForm(frank.form.body, frank.form.url).fields;
    const race = await Promise.all([A, B, A, B].map((server) => rawRequest(server.port, {
      method: 'POST', path: '/account/recover/code', host: new URL(lb.url).host,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [...other.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'x-forwarded-for': lb.freshAddress() },
      body: new URLSearchParams({ ...fieldsOf, code: frank.code }).toString(),
    })));
    expect(race.map((r) => r.status).sort()).toEqual([200, 200, 200, 303]);
  });

  it('a code of one account never finishes the recovery of another', async () => {
    const attacker = new Browser();
    const forBob = await askForCode(attacker, await signInPage(attacker), BOB.username);
    const gina = await codeFor(attacker, GINA);
    expect(alertOf(await enterCode(attacker, forBob, gina.code))).toMatch(/That code is not right/);
    // Gina's own code, on her own form: her recovery, her password.
    const page = await attacker.follow(await enterCode(attacker, gina.form, gina.code), lb.url);
    const { action, fields } = readForm(page.body, page.url);
    const changed = await attacker.follow(await attacker.post(action, { ...fields, new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }), lb.url);
    expect(changed.location?.startsWith(`${WEB_REDIRECT}?code=`), changed.location ?? changed.body.slice(0, 300)).toBe(true);
    const bobSignsIn = await authorize(new Browser(), lb.url, 'web', WEB_REDIRECT, BOB, 'openid');
    expect(bobSignsIn.code).not.toBe('');
    const ginaSignsIn = await authorize(new Browser(), lb.url, 'web', WEB_REDIRECT, { username: 'gina', password: NEW_PASSWORD }, 'openid');
    expect(ginaSignsIn.code).not.toBe('');
  });

  it('the per-address sign-in throttle counts wrong codes', async () => {
    // IDP_LOGIN_MAX_FAILURES_PER_ADDRESS=8: five wrong codes for one account, three for another.
    const browser = new AddressedBrowser('192.0.2.77');
    const hank = await codeFor(browser, HANK);
    const ivy = await codeFor(browser, IVY);
    const wrong = (code: string, i: number) => String((Number(code) + 1 + i) % 100_000_000).padStart(8, '0');
    for (let i = 0; i < 5; i++) expect(alertOf(await enterCode(browser, hank.form, wrong(hank.code, i)))).toMatch(/not right/);
    for (let i = 0; i < 3; i++) expect(alertOf(await enterCode(browser, ivy.form, wrong(ivy.code, i)))).toMatch(/not right/);
    expect(alertOf(await enterCode(browser, ivy.form, ivy.code))).toMatch(/Too many failed attempts/);
    // From another address, Ivy's code still works.
    browser.address = '192.0.2.78';
    const elsewhere = await enterCode(browser, ivy.form, ivy.code);
    expect(elsewhere.status, elsewhere.body.slice(0, 300)).toBe(303);
  });

  it('answers the same page, in the same time, whether or not the account exists', async () => {
    const browser = new Browser();
    const formPage = await browser.get(forgotLink(await signInPage(browser)) ?? '');
    const { action, fields } = readForm(formPage.body, formPage.url);
    const ask = async (identifier: string) => {
      const started = performance.now();
      const answer = await browser.post(action, { ...fields, identifier });
      return { answer, ms: performance.now() - started };
    };
    const known = await ask(JILL.username);
    for (const identifier of ['nobody-at-all', email(JILL), 'nobody@example.com', '']) {
      const other = await ask(identifier);
      expect(other.answer.status).toBe(known.answer.status);
      expect(withoutTokens(other.answer.body)).toBe(withoutTokens(known.answer.body));
      expect([...other.answer.headers.keys()].sort()).toEqual([...known.answer.headers.keys()].sort());
    }
    const times: Record<'known' | 'unknown', number[]> = { known: [], unknown: [] };
    for (let i = 0; i < 30; i++) {
      const order: Array<'known' | 'unknown'> = i % 2 === 0 ? ['known', 'unknown'] : ['unknown', 'known'];
      for (const which of order) times[which].push((await ask(which === 'known' ? JILL.username : `nobody-${i}`)).ms);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
    const [k, u] = [median(times.known), median(times.unknown)];
    // Generous: a shared machine is noisy; a difference that tells who exists (a database write,
    // a mail server's round trip) is larger than this.
    expect(Math.abs(k - u), `median ${k.toFixed(1)} ms (account) vs ${u.toFixed(1)} ms (none)`).toBeLessThan(Math.max(15, 0.5 * Math.max(k, u)));
  });

  it('every form needs its CSRF token; opened without a sign-in page of this browser, it ends at the account page', async () => {
    const browser = new Browser();
    const form = await askForCode(browser, await signInPage(browser), 'nobody');
    const { action, fields } = readForm(form.body, form.url);
    const forged = await browser.post(action, { ...fields, csrf_token: 'x'.repeat(43), code: '12345678' });
    expect(forged.status).toBe(400);
    expect(forged.body).toContain('This form was not sent from this browser');
    const noToken = await new Browser().post(`${lb.url}/account/recover`, { identifier: 'alice' });
    expect(noToken.status).toBe(400);
    expect(forgotLink(await signInPage(new Browser()))).toMatch(/\/account\/recover\?interaction=/);
    // A bookmark: the request form, the code, the new password, then the account page, signed in.
    const bookmark = new Browser();
    const bare = await bookmark.get(`${lb.url}/account/recover`);
    expect(bare.status, bare.body.slice(0, 300)).toBe(200);
    expect(bare.body).toContain('Back to sign in');
    const before = mailCount(email(LEO));
    const request = readForm(bare.body, bare.url);
    const codeForm = await bookmark.post(request.action, { ...request.fields, identifier: LEO.username });
    expect(isCodeForm(codeForm), codeForm.body.slice(0, 300)).toBe(true);
    expect(codeForm.body).toContain('Send a new code');
    const steps = await bookmark.follow(await enterCode(bookmark, codeForm, codeIn(await nthMailTo(servers, email(LEO), before + 1))), lb.url);
    expect(formTo(steps, 'password'), steps.body.slice(0, 500)).toBe(true);
    const landed = await submit(bookmark, steps, lb.url, { new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD });
    expect(landed.status, landed.body.slice(0, 300)).toBe(200);
    expect(landed.url).toBe(`${lb.url}/account?done=password`);
    expect(landed.body).toContain('<h1>Your account</h1>');
    expect(landed.body).toContain('Your password was changed');
  });
});

describe.runIf(postgresAvailable)('forgot password through a real SMTP server', () => {
  let smtp: SmtpCatcher;
  let deployment: Deployment;
  let base: string;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    deployment = await startDeployment({
      seed: seedOf([webClient('web')], [ALICE]),
      env: { IDP_SMTP_URL: smtp.url, IDP_MAIL_FROM: 'Sign-in <no-reply@example.com>' },
    });
    base = (deployment.servers[0] as RunningServer).url;
  });
  afterAll(async () => {
    await deployment?.stop();
    await smtp?.close();
  });

  it('the code and the link arrive by SMTP; the link leads to the new password and the notice follows', async () => {
    const browser = new Browser();
    const { page } = await beginAuthorization(browser, base, 'web', WEB_REDIRECT, { scope: 'openid' });
    const form = await askForCode(browser, page, ALICE.username);
    expect(isCodeForm(form)).toBe(true);
    const mail = await smtp.waitForMessage((m) => m.to === email(ALICE) && m.subject.includes('reset code'));
    expect(mail.from).toContain('<no-reply@example.com>');
    const code = codeIn(mail);
    expect(mail.html).toContain(code);
    // In the HTML part, the link is a link.
    expect(mail.html).toMatch(/<a href="http[^"]*\/account\/recover\/code\?[^"]*"[^>]*>http/);
    const phone = new Browser();
    const opened = await phone.get(linkIn(mail));
    expect(opened.body).toContain(`value="${code}"`);
    const steps = await phone.follow(await enterCode(phone, opened, code), base);
    const { action, fields } = readForm(steps.body, steps.url);
    const changed = await phone.follow(await phone.post(action, { ...fields, new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD }), base);
    expect(changed.location?.startsWith(`${WEB_REDIRECT}?code=`), changed.location ?? changed.body.slice(0, 300)).toBe(true);
    const notice = await smtp.waitForMessage((m) => m.to === email(ALICE) && m.subject.includes('Your password was changed'));
    expect(notice.text).toContain('If this was not you');
    expect(/\d{8}/.test(notice.text)).toBe(false);
  });
});

describe.runIf(postgresAvailable)('forgot password in production without a mail server', () => {
  let redis: OwnRedis;
  let deployment: Deployment;
  let base: string;
  beforeAll(async () => {
    redis = await startOwnRedis();
    deployment = await startDeployment({
      seed: seedOf([webClient('web')], [ALICE]),
      env: { NODE_ENV: 'production', REDIS_URL: redis.url, IDP_ALLOW_HTTP: '1', IDP_PASSWORD_RESET_URL: 'https://password.example.com/reset' },
    });
    base = (deployment.servers[0] as RunningServer).url;
  });
  afterAll(async () => {
    await deployment?.stop();
    await redis?.stop();
  });

  it('is not offered: "Forgot password?" leads to IDP_PASSWORD_RESET_URL, and the recovery pages say so', async () => {
    const browser = new Browser();
    const { page } = await beginAuthorization(browser, base, 'web', WEB_REDIRECT, { scope: 'openid' });
    expect(isSignInPage(page)).toBe(true);
    expect(forgotLink(page)).toBe('https://password.example.com/reset');
    const own = await browser.get(`${base}/account/recover`);
    expect(own.status).toBe(404);
    expect(own.body).toContain('Passwords cannot be reset here');
    const posted = await browser.post(`${base}/account/recover`, { identifier: ALICE.username });
    expect(posted.status).toBe(404);
    expect(mailsIn(deployment.servers)).toEqual([]);
  });
});
