/**
 * The second factor from outside: two `idp serve` instances on one PostgreSQL database and one
 * Redis (same IDP_SECRET), driven by a cookie-jar browser over HTTP, the `idp` command and the
 * token endpoint (openid-client, or fetch where the exact error matters). Codes are computed here
 * from the seeded secret (RFC 6238, SHA-1, 30 s, 6 digits). Usernames carry a random suffix:
 * throttling keys live in the shared Redis, which other suites may use at the same time.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import * as client from 'openid-client';
import { generateURI } from 'otplib';
import QRCode from 'qrcode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL, postgresAvailable, redisAvailable } from '../helpers/services.ts';
import {
  AddressedBrowser, THROTTLED_TEXT, UNRECOGNISED_TEXT, WEB_REDIRECT, WEB_SECRET, alertText, awayFromStepEnd, burst, codeOf, decodeJwt, describePage,
  expectInvalidGrant, expectKind, inBatches, kindOf, nowSeconds, recoveryCodesOf, redeem, refresh, signIn, startAuthorization, startStack, submit, totp,
  type OpenForm, type Page, type SeedUser, type Stack,
} from './account-support.ts';

const SECRET = 'JBSWY3DPEHPK3PXP';
/** The RFC 6238 time step (30 s) a moment falls in. */
const stepOf = (seconds: number) => Math.floor(seconds / 30);
const sfx = randomBytes(3).toString('hex');
const user = (name: string, extra: Partial<SeedUser> = {}): SeedUser => ({ username: `${name}-${sfx}`, password: `${name} has a long password 9`, ...extra });

const ANN = user('ann', { totp_secret: SECRET });
const BEN = user('ben');
const CAT = user('cat', { totp_secret: SECRET });
const DAN = user('dan', { totp_secret: SECRET });
const EVE = user('eve', { totp_secret: SECRET });
const FAY = user('fay', { totp_secret: SECRET });
const GUS = user('gus');
const HAL = user('hal', { totp_secret: SECRET });
const IVY = user('ivy', { must_enrol_mfa: true });
const JAY = user('jay', { totp_secret: SECRET });
const KIM = user('kim', { totp_secret: SECRET, must_change_password: true });
const LEO = user('leo', { totp_secret: SECRET });
const MIA = user('mia', { totp_secret: SECRET });
const NED = user('ned', { must_enrol_mfa: true });

describe.runIf(postgresAvailable && redisAvailable)('second factor (two instances, one database, one Redis)', () => {
  let stack: Stack;
  let a: string;
  let b: string;

  beforeAll(async () => {
    stack = await startStack([ANN, BEN, CAT, DAN, EVE, FAY, GUS, HAL, IVY, JAY, KIM, LEO, MIA, NED], {
      REDIS_URL, IDP_TRUST_PROXY: 'true', IDP_LOGIN_MAX_FAILURES: '3', IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: '6',
    }, 2);
    a = stack.servers[0]?.url ?? '';
    b = stack.servers[1]?.url ?? '';
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** Password, then the second-factor page (asserted); returns the browser and that page. */
  async function toOtpPage(base: string, u: SeedUser) {
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, base);
    expectKind(started.page, 'sign-in');
    const page = await signIn(browser, started.page, base, u.username, u.password);
    expectKind(page, 'otp');
    return { browser, page, started };
  }

  async function enterCode(browser: AddressedBrowser, page: Page, base: string, code: string): Promise<Page> {
    return submit(browser, page, base, { otp: code });
  }

  /** The enrolment's first code: the new recovery codes are shown once, and "Continue" goes on. */
  async function enrolWith(browser: AddressedBrowser, page: Page, base: string, code: string): Promise<Page> {
    const codes = await enterCode(browser, page, base, code);
    expectKind(codes, 'recovery-codes');
    expect(recoveryCodesOf(codes)).toHaveLength(10);
    return submit(browser, codes, base, {});
  }

  /** A refused code: the second-factor page again, with an error, and no way on to the client. */
  function expectRefusedCode(page: Page): void {
    expectKind(page, 'otp');
    expect(alertText(page), describePage(page)).not.toBe('');
    expect(page.location).toBeUndefined();
  }

  it('asks an enrolled user for a code after the password, and the ID token says amr [pwd, mfa], acr mfa (openid-client)', async () => {
    const config = await client.discovery(new URL(`${a}/`), 'web', undefined, client.ClientSecretBasic(WEB_SECRET), {
      execute: [client.allowInsecureRequests],
    });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: WEB_REDIRECT, scope: 'openid profile', state, nonce,
      code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
    });
    const browser = new AddressedBrowser();
    const first = await browser.follow(await browser.get(url.href), a);
    expectKind(first, 'sign-in');
    const otpPage = await signIn(browser, first, a, ANN.username, ANN.password);
    expectKind(otpPage, 'otp');
    expect(otpPage.body).toMatch(/<label[^>]*for="otp"[^>]*>Authentication code<\/label>/);
    expect(otpPage.body).toMatch(/<button[^>]*type="submit"[^>]*>Verify<\/button>/);
    // The password alone gives no code: reloading the interaction shows the same page.
    const reloaded = await browser.get(otpPage.url);
    expectKind(reloaded, 'otp');

    await awayFromStepEnd();
    const done = await enterCode(browser, otpPage, a, await totp(SECRET, nowSeconds()));
    expectKind(done, 'redirect');
    const tokens = await client.authorizationCodeGrant(config, new URL(done.location ?? ''), {
      pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true,
    });
    const claims = tokens.claims();
    expect(claims?.amr).toEqual(['pwd', 'mfa']);
    expect(claims?.acr).toBe('urn:svc:ac:mfa');
    expect(claims?.preferred_username).toBe(ANN.username);
  });

  it('gives a user without a second factor amr [pwd] and acr pwd, without asking for a code', async () => {
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, a);
    const done = await signIn(browser, started.page, a, BEN.username, BEN.password);
    const answer = await redeem(a, codeOf(done, started.state), started.verifier);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const id = decodeJwt(answer.body.id_token).payload;
    expect(id.amr).toEqual(['pwd']);
    expect(id.acr).toBe('urn:svc:ac:pwd');
  });

  it('stores a seeded secret sealed ("v1." ...), never the base32 secret, in any column', async () => {
    const rows = await stack.sql<{ sealed: string | null; row: string }>(
      `SELECT f.secret_sealed AS sealed, row_to_json(u)::text || row_to_json(f)::text AS row FROM users u LEFT JOIN user_factors f ON f.user_id = u.id AND f.kind = 'totp' WHERE username = $1`, [ANN.username]);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.sealed).toMatch(/^v1\./);
    expect(rows[0]?.row).not.toContain(SECRET);
    expect(rows[0]?.row.toLowerCase()).not.toContain(SECRET.toLowerCase());
  });

  it('refuses a code used once already, in a fresh sign-in on the same instance; a new code still works', async () => {
    await awayFromStepEnd();
    const code = await totp(SECRET, nowSeconds());
    const first = await toOtpPage(a, CAT);
    expectKind(await enterCode(first.browser, first.page, a, code), 'redirect');

    const second = await toOtpPage(a, CAT);
    const replayed = await enterCode(second.browser, second.page, a, code);
    expectRefusedCode(replayed);
    // Control: the same page accepts the next step's code, so the refusal was the replay.
    const done = await enterCode(second.browser, replayed, a, await totp(SECRET, nowSeconds() + 30));
    expectKind(done, 'redirect');
    const answer = await redeem(a, codeOf(done, second.started.state), second.started.verifier);
    expect(decodeJwt(answer.body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
    // A refreshed ID token still says how the user signed in.
    const refreshed = await refresh(b, String(answer.body.refresh_token));
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(decodeJwt(refreshed.body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
    expect(decodeJwt(refreshed.body.id_token).payload.acr).toBe('urn:svc:ac:mfa');
  });

  it('refuses through instance B a code used through instance A', async () => {
    await awayFromStepEnd();
    const code = await totp(SECRET, nowSeconds());
    const atA = await toOtpPage(a, DAN);
    expectKind(await enterCode(atA.browser, atA.page, a, code), 'redirect');

    const atB = await toOtpPage(b, DAN);
    expectRefusedCode(await enterCode(atB.browser, atB.page, b, code));
    // Control: B takes a code it has not seen used.
    const done = await enterCode(atB.browser, atB.page, b, await totp(SECRET, nowSeconds() + 30));
    expectKind(done, 'redirect');
  });

  it('accepts a code from one step behind (now-30 s) once; refuses it again and refuses now-90 s', async () => {
    await awayFromStepEnd(15);
    const first = await toOtpPage(a, EVE);
    const behind = await totp(SECRET, nowSeconds() - 30);
    expectKind(await enterCode(first.browser, first.page, a, behind), 'redirect');

    const second = await toOtpPage(a, EVE);
    expectRefusedCode(await enterCode(second.browser, second.page, a, behind));
    expectRefusedCode(await enterCode(second.browser, second.page, a, await totp(SECRET, nowSeconds() - 90)));
    await awayFromStepEnd();
    expectKind(await enterCode(second.browser, second.page, a, await totp(SECRET, nowSeconds())), 'redirect');
  });

  it('accepts a code from one step ahead (now+30 s) once; refuses it again and refuses now+90 s', async () => {
    await awayFromStepEnd(15);
    const first = await toOtpPage(a, FAY);
    const aheadAt = nowSeconds() + 30;
    const ahead = await totp(SECRET, aheadAt);
    expectKind(await enterCode(first.browser, first.page, a, ahead), 'redirect');

    const second = await toOtpPage(a, FAY);
    expectRefusedCode(await enterCode(second.browser, second.page, a, ahead));
    expectRefusedCode(await enterCode(second.browser, second.page, a, await totp(SECRET, nowSeconds() + 90)));
    await awayFromStepEnd();
    // A step not used yet: the current one, or (when a slow run has reached the step used
    // ahead) the one before it, still within the drift window.
    const unused = stepOf(nowSeconds()) === stepOf(aheadAt) ? nowSeconds() - 30 : nowSeconds();
    expectKind(await enterCode(second.browser, second.page, a, await totp(SECRET, unused)), 'redirect');
  });

  it('counts wrong codes as failed sign-ins: after 3 the right code is refused, and B refuses even the password from that address', async () => {
    const { browser, page } = await toOtpPage(a, HAL);
    let current = page;
    for (let i = 0; i < 3; i++) {
      current = await enterCode(browser, current, a, '000000' === (await totp(SECRET, nowSeconds())) ? '111111' : '000000');
      expectRefusedCode(current);
      expect(alertText(current)).not.toContain(THROTTLED_TEXT);
    }
    await awayFromStepEnd();
    const right = await enterCode(browser, current, a, await totp(SECRET, nowSeconds()));
    expect(kindOf(right), describePage(right)).not.toBe('redirect');
    expect(alertText(right)).toContain(THROTTLED_TEXT);

    // The lock is in the shared store: instance B will not even take the password from that address.
    const other = new AddressedBrowser(browser.address);
    const started = await startAuthorization(other, b);
    const atB = await signIn(other, started.page, b, HAL.username, HAL.password);
    expectKind(atB, 'sign-in');
    expect(alertText(atB)).toContain(THROTTLED_TEXT);
  });

  describe('a concurrent burst of codes on 100 fresh interactions, split over A and B (IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT=6)', () => {
    const BURST = 100;

    /**
     * `BURST` interactions of `u`, each past the right password in its own browser and address,
     * alternately on A and B. Two at a time: a password being checked holds one of the account's
     * attempts until it is found right.
     */
    const formsAfterPassword = (u: SeedUser, kind: 'otp' | 'enrol') =>
      inBatches(BURST, 2, async (i): Promise<OpenForm> => {
        const base = i % 2 === 0 ? a : b;
        const browser = new AddressedBrowser();
        const started = await startAuthorization(browser, base);
        const page = await signIn(browser, started.page, base, u.username, u.password);
        expectKind(page, kind);
        return { browser, page, base };
      });

    /** A code that is wrong for `secret` in the whole window the server accepts (now and one step either side). */
    async function wrongCode(secret: string): Promise<string> {
      const now = nowSeconds();
      const near = await Promise.all([-60, -30, 0, 30, 60].map((d) => totp(secret, now + d)));
      return ['000000', '111111', '222222', '333333', '444444', '555555'].find((c) => !near.includes(c)) ?? '';
    }

    it('judges 6 second-factor codes (each from its own address), and the right code at position 90 is refused', async () => {
      const forms = await formsAfterPassword(MIA, 'otp');
      await awayFromStepEnd(10);
      const right = await totp(SECRET, nowSeconds());
      const wrong = await wrongCode(SECRET);
      const sent = await burst(forms, (i) => ({ otp: i === 90 ? right : wrong }), 'That code is not right');
      expect(sent.other.map((i) => describePage(sent.answers[i]!)), 'every answer is a wrong code or the lock').toEqual([]);
      expect(sent.judged).toBe(6);
      expect(sent.throttled).toBe(BURST - 6);
      expect(kindOf(sent.answers[90]!), describePage(sent.answers[90]!)).toBe('otp');
      expect(alertText(sent.answers[90]!)).toContain(UNRECOGNISED_TEXT);
    });

    it('judges 6 enrolment codes (each from its own address), and the right code at position 90 is refused', async () => {
      const forms = await formsAfterPassword(NED, 'enrol');
      // Each interaction shows a secret of its own; each form gets a code wrong for its secret.
      const secrets = forms.map(({ page }) => (/<code>([^<]*)<\/code>/.exec(page.body)?.[1] ?? '').replace(/\s+/g, ''));
      expect(secrets.filter((secret) => secret.length < 26)).toEqual([]);
      await awayFromStepEnd(10);
      const codes = await Promise.all(secrets.map((secret, i) => (i === 90 ? totp(secret, nowSeconds()) : wrongCode(secret))));
      const sent = await burst(forms, (i) => ({ otp: codes[i] ?? '' }), 'That code is not right');
      expect(sent.other.map((i) => describePage(sent.answers[i]!)), 'every answer is a wrong code or the lock').toEqual([]);
      expect(sent.judged).toBe(6);
      expect(sent.throttled).toBe(BURST - 6);
      expect(kindOf(sent.answers[90]!), describePage(sent.answers[90]!)).toBe('enrol');
      expect(alertText(sent.answers[90]!)).toContain(UNRECOGNISED_TEXT);
    });
  });

  /** Keys of the service's interactions in Redis (default prefix) whose value holds `text` in clear. */
  async function plaintextInRedis(text: string): Promise<string[]> {
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    try {
      const found: string[] = [];
      let seen = 0;
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', 'idp:interaction:*', 'COUNT', 500);
        cursor = next;
        for (const key of keys) {
          const value = await redis.get(key).catch(() => null);
          if (value !== null) seen += 1;
          if (value?.includes(text)) found.push(key);
        }
      } while (cursor !== '0');
      expect(seen, 'the interactions are where this looks').toBeGreaterThan(0);
      return found;
    } finally {
      redis.disconnect();
    }
  }

  /** The enrolment page's secret as shown (groups of four), and the same without spaces. */
  function enrolSecret(page: Page): { shown: string; secret: string } {
    const shown = /<code>([^<]*)<\/code>/.exec(page.body)?.[1]?.trim() ?? '';
    return { shown, secret: shown.replace(/\s+/g, '') };
  }

  /** Whether the page's inline SVG is a QR code of the otpauth URI for `secret` (any error level and margin). */
  async function qrEncodes(page: Page, base: string, account: string, secret: string): Promise<boolean> {
    const svg = /<svg[^>]*>[\s\S]*?<\/svg>/g;
    const shown = [...page.body.matchAll(svg)].map((m) => m[0]).filter((s) => !s.includes('alert-icon'));
    const uri = generateURI({ issuer: new URL(base).host, label: account, secret });
    for (const errorCorrectionLevel of ['L', 'M', 'Q', 'H'] as const) {
      for (const margin of [0, 1, 2, 4]) {
        const expected = await QRCode.toString(uri, { type: 'svg', margin, errorCorrectionLevel });
        const path = /<path[^>]*stroke="#000000"[^>]*d="([^"]+)"/.exec(expected)?.[1];
        if (path && shown.some((s) => s.includes(path))) return true;
      }
    }
    return false;
  }

  function expectEnrolPage(page: Page): void {
    expectKind(page, 'enrol');
    // An inline SVG with a long path: the QR code (the brand mark and alert icon are small).
    expect(page.body).toMatch(/<svg[^>]*>(?:(?!<\/svg>)[\s\S])*<path[^>]*\sd="[^"]{300,}"/);
    expect(page.body).toMatch(/<label[^>]*for="otp"[^>]*>Authentication code<\/label>/);
    expect(page.body).toMatch(/<button[^>]*type="submit"[^>]*>Verify<\/button>/);
  }

  it('enrols a seeded must_enrol_mfa user with the secret read from the enrolment page; the next sign-in asks for a code', async () => {
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, a);
    const page = await signIn(browser, started.page, a, IVY.username, IVY.password);
    expectEnrolPage(page);
    const { shown, secret } = enrolSecret(page);
    expect(shown).toMatch(/^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$/);
    expect(secret.length, 'at least 128 bits of base32').toBeGreaterThanOrEqual(26);
    expect(await qrEncodes(page, a, IVY.username, secret), 'the QR code carries the secret shown as text').toBe(true);
    expect(await qrEncodes(page, a, IVY.username, SECRET), 'the check can tell another secret apart').toBe(false);

    await awayFromStepEnd();
    const done = await enrolWith(browser, page, a, await totp(secret, nowSeconds()));
    const answer = await redeem(a, codeOf(done, started.state), started.verifier);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(decodeJwt(answer.body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
    expect(decodeJwt(answer.body.id_token).payload.acr).toBe('urn:svc:ac:mfa');

    const rows = await stack.sql<{ sealed: string | null; flag: boolean; row: string }>(
      `SELECT f.secret_sealed AS sealed, must_enrol_mfa AS flag, row_to_json(u)::text || row_to_json(f)::text AS row FROM users u LEFT JOIN user_factors f ON f.user_id = u.id AND f.kind = 'totp' WHERE username = $1`, [IVY.username]);
    expect(rows[0]?.sealed).toMatch(/^v1\./);
    expect(rows[0]?.flag, 'an administrator\'s requirement stays after enrolment').toBe(true);
    expect(rows[0]?.row).not.toContain(secret);

    // Next sign-in (through the other instance): a code is asked for, and the enrolled secret works.
    const again = await toOtpPage(b, IVY);
    expectKind(await enterCode(again.browser, again.page, b, await totp(secret, nowSeconds() + 30)), 'redirect');
  });

  it('after `idp users require-mfa`: refresh fails, no code is issued, enrolment with the page\'s secret, then codes are asked for', async () => {
    // Before the flag: a signed-in browser and a refresh token.
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, a);
    const done = await signIn(browser, started.page, a, GUS.username, GUS.password);
    const tokens = await redeem(a, codeOf(done, started.state), started.verifier);
    expect(tokens.status).toBe(200);
    const refreshToken = String(tokens.body.refresh_token);
    expect(refreshToken.length).toBeGreaterThan(10);
    const rotated = await refresh(a, refreshToken);
    expect(rotated.status, 'the refresh token works before the flag').toBe(200);
    const current = String(rotated.body.refresh_token);

    await stack.idpOk(['users', 'require-mfa', GUS.username]);
    expectInvalidGrant(await refresh(a, current));
    expectInvalidGrant(await refresh(b, current));

    // The existing browser session gives no code: silently it is interaction_required...
    const silent = await startAuthorization(browser, a, 'openid');
    expect(kindOf(silent.page), describePage(silent.page)).not.toBe('redirect');
    const none = await browser.get(`${a}/connect/authorize?${new URLSearchParams({
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid', prompt: 'none', state: 's1',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
    })}`);
    expect(none.status).toBe(302);
    const noneParams = new URL(none.location ?? '').searchParams;
    expect(noneParams.get('code')).toBeNull();
    expect(['interaction_required', 'login_required']).toContain(noneParams.get('error'));

    // ...and a fresh sign-in leads to enrolment, where a wrong code gives nothing either.
    const fresh = new AddressedBrowser();
    const second = await startAuthorization(fresh, a);
    const enrol = await signIn(fresh, second.page, a, GUS.username, GUS.password);
    expectEnrolPage(enrol);
    const { secret } = enrolSecret(enrol);
    expect(await plaintextInRedis(secret), 'the enrolment secret in the shared store').toEqual([]);
    const wrong = await enterCode(fresh, enrol, a, (await totp(secret, nowSeconds())) === '123456' ? '654321' : '123456');
    expectKind(wrong, 'enrol');
    expect(alertText(wrong)).not.toBe('');
    expect(enrolSecret(wrong).secret, 'the same secret until it is confirmed').toBe(secret);
    expectInvalidGrant(await refresh(a, current));
    expect((await stack.sql<{ sealed: string | null }>(`SELECT f.secret_sealed AS sealed FROM users u LEFT JOIN user_factors f ON f.user_id = u.id AND f.kind = 'totp' WHERE username = $1`, [GUS.username]))[0]?.sealed)
      .toBeNull();

    await awayFromStepEnd();
    const enrolled = await enrolWith(fresh, wrong, a, await totp(secret, nowSeconds()));
    const answer = await redeem(a, codeOf(enrolled, second.state), second.verifier);
    expect(decodeJwt(answer.body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
    const rows = await stack.sql<{ sealed: string | null; flag: boolean }>(
      `SELECT f.secret_sealed AS sealed, must_enrol_mfa AS flag FROM users u LEFT JOIN user_factors f ON f.user_id = u.id AND f.kind = 'totp' WHERE username = $1`, [GUS.username]);
    expect(rows[0]?.sealed).toMatch(/^v1\./);
    expect(rows[0]?.sealed).not.toContain(secret);
    expect(rows[0]?.flag, 'an administrator\'s requirement stays after enrolment').toBe(true);

    const next = await toOtpPage(b, GUS);
    expectKind(await enterCode(next.browser, next.page, b, await totp(secret, nowSeconds() + 30)), 'redirect');
  });
  it('of two simultaneous uses of one code on instances A and B, exactly one signs in', async () => {
    const atA = await toOtpPage(a, LEO);
    const atB = await toOtpPage(b, LEO);
    await awayFromStepEnd();
    const code = await totp(SECRET, nowSeconds());
    const [fromA, fromB] = await Promise.all([enterCode(atA.browser, atA.page, a, code), enterCode(atB.browser, atB.page, b, code)]);
    const kinds = [kindOf(fromA), kindOf(fromB)].sort();
    expect(kinds, `${describePage(fromA)} | ${describePage(fromB)}`).toEqual(['otp', 'redirect']);
  });

  it('asks an enrolled user who must change the password for the code, then the new password, then issues tokens', async () => {
    const { browser, page, started } = await toOtpPage(a, KIM);
    await awayFromStepEnd();
    const passwordPage = await enterCode(browser, page, a, await totp(SECRET, nowSeconds()));
    expectKind(passwordPage, 'password');
    const done = await submit(browser, passwordPage, a, { new_password: 'a brand new passphrase 2044', confirm_password: 'a brand new passphrase 2044' });
    const answer = await redeem(a, codeOf(done, started.state), started.verifier);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(decodeJwt(answer.body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
  });

  it('`idp users require-mfa` for a user already enrolled: a sign-in that ends in a code ends in tokens', async () => {
    await stack.idpOk(['users', 'require-mfa', JAY.username]);
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, a);
    let page = await signIn(browser, started.page, a, JAY.username, JAY.password);
    // Whichever the service asks for (the enrolled code, or a new enrolment), the user can do it.
    await awayFromStepEnd();
    if (kindOf(page) === 'otp') page = await enterCode(browser, page, a, await totp(SECRET, nowSeconds()));
    else if (kindOf(page) === 'enrol') page = await enrolWith(browser, page, a, await totp(enrolSecret(page).secret, nowSeconds()));
    const answer = await redeem(a, codeOf(page, started.state), started.verifier);
    // A code was issued, so the user passed every step: the token endpoint must not refuse it.
    expect(answer.status, `token endpoint after a completed sign-in: ${JSON.stringify(answer.body)}`).toBe(200);
    expect(decodeJwt(answer.body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
  });
});
