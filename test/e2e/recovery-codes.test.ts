/**
 * Recovery codes and the administrators' reset of second factors, from outside: two `idp serve`
 * instances on one PostgreSQL database and one Redis, driven over HTTP by cookie-jar browsers,
 * the `idp` command and the token endpoint. Codes come from the page that shows them once after
 * enrolment; the mail a used code sends is the log mailer's line on the server's stdout.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputWhen, runIdp, startServer, type RunningServer } from '../helpers/process.ts';
import { REDIS_URL, postgresAvailable, redisAvailable } from '../helpers/services.ts';
import {
  AddressedBrowser, IDP_SECRET, THROTTLED_TEXT, alertText, awayFromStepEnd, codeOf, decodeJwt, describePage, expectInvalidGrant, expectKind,
  kindOf, nowSeconds, recoveryCodesOf, redeem, refresh, signIn, startAuthorization, startStack, submit, totp,
  type Page, type SeedUser, type Stack,
} from './account-support.ts';

const sfx = randomBytes(3).toString('hex');
const user = (name: string): SeedUser => ({
  username: `${name}-${sfx}`, password: `${name} keeps recovery codes 7`, must_enrol_mfa: true, email: `${name}-${sfx}@example.test`,
});
const ROSE = user('rose');
const RACE = user('race');
const TESS = user('tess');
const ROTA = user('rota');
const RITA = user('rita');
const RUTH = user('ruth');
const RICK = user('rick');
const CODE_FORMAT = /^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{2}$/;

/** JSON lines of a server's output. */
function lines(output: string): Array<Record<string, unknown>> {
  return output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe.runIf(postgresAvailable && redisAvailable)('recovery codes (two instances, one database, one Redis)', () => {
  let stack: Stack;
  let a: string;
  let b: string;

  beforeAll(async () => {
    stack = await startStack([ROSE, RACE, TESS, ROTA, RITA, RUTH, RICK], { REDIS_URL, IDP_TRUST_PROXY: 'true', IDP_LOGIN_MAX_FAILURES: '3', LOG_LEVEL: 'info' }, 2);
    a = stack.servers[0]?.url ?? '';
    b = stack.servers[1]?.url ?? '';
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** Signs a must-enrol user in and enrols: returns the codes shown, the page, and the TOTP secret. */
  async function enrol(u: SeedUser, base: string) {
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, base);
    const page = await signIn(browser, started.page, base, u.username, u.password);
    expectKind(page, 'enrol');
    const secret = (/<code>([^<]*)<\/code>/.exec(page.body)?.[1] ?? '').replace(/\s+/g, '');
    await awayFromStepEnd();
    const shown = await submit(browser, page, base, { otp: await totp(secret, nowSeconds()) });
    expectKind(shown, 'recovery-codes');
    return { browser, started, shown, codes: recoveryCodesOf(shown), secret };
  }

  /** Password, then the second-factor page's "Use a recovery code" link: the recovery code form. */
  async function toRecoveryPage(u: SeedUser, base: string, browser = new AddressedBrowser()) {
    const started = await startAuthorization(browser, base);
    const otp = await signIn(browser, started.page, base, u.username, u.password);
    expectKind(otp, 'otp');
    const link = /<a href="([^"]*\/recovery)">Use a recovery code<\/a>/.exec(otp.body)?.[1];
    expect(link, describePage(otp)).toBeDefined();
    const page = await browser.follow(await browser.get(new URL(link!.replace(/&#x2F;|&#47;/g, '/'), base).href), base);
    expectKind(page, 'recovery');
    return { browser, started, page };
  }

  const useCode = (browser: AddressedBrowser, page: Page, base: string, code: string) => submit(browser, page, base, { recovery_code: code });

  const codesLeft = async (u: SeedUser) => Number((await stack.sql<{ n: string }>(
    `SELECT count(*) AS n FROM user_factors f JOIN users u ON u.id = f.user_id WHERE u.username = $1 AND f.kind = 'recovery_code'`, [u.username]))[0]?.n);

  it('shows 10 codes once after enrolment, stores only keyed hashes, and "Continue" completes the sign-in', async () => {
    const { browser, started, shown, codes } = await enrol(ROSE, a);
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(CODE_FORMAT);
    const rows = await stack.sql<{ secret_hash: string; row: string }>(
      `SELECT f.secret_hash, row_to_json(f)::text AS row FROM user_factors f JOIN users u ON u.id = f.user_id WHERE u.username = $1 AND f.kind = 'recovery_code'`, [ROSE.username]);
    expect(rows).toHaveLength(10);
    for (const code of codes) expect(rows.map((r) => r.row).join(' ')).not.toContain(code.replace(/-/g, ''));
    const done = await submit(browser, shown, a, {});
    const answer = await redeem(a, codeOf(done, started.state), started.verifier);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(decodeJwt(answer.body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
    // Shown once: the interaction's page no longer has them, it goes on.
    const again = await browser.get(shown.url);
    expect(again.body).not.toContain(codes[0]);
    const audit = await outputWhen(stack.servers[0]!, (o) => o.includes('"event":"recovery_codes_generated"'));
    const events = lines(audit).filter((l) => l.audit === true && l.user_id !== undefined);
    expect(events.find((l) => l.event === 'mfa_added')).toMatchObject({ kind: 'totp' });
    expect(events.find((l) => l.event === 'recovery_codes_generated')).toMatchObject({ count: 10 });
    expect(audit).not.toContain(codes[0]);
  });

  it('signs in with a recovery code typed in any case, without hyphens, on the other instance; mails the user; the code then fails', async () => {
    const { codes } = await enrol(RITA, a);
    const { browser, started, page } = await toRecoveryPage(RITA, b);
    const typed = ` ${codes[3]!.replace(/-/g, '').toUpperCase().slice(0, 5)} ${codes[3]!.replace(/-/g, '').toUpperCase().slice(5)} `;
    const done = await useCode(browser, page, b, typed);
    const answer = await redeem(b, codeOf(done, started.state), started.verifier);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const claims = decodeJwt(answer.body.id_token).payload;
    expect(claims.amr).toEqual(['pwd', 'mfa']);
    expect(claims.acr).toBe('urn:svc:ac:mfa');
    expect(await codesLeft(RITA)).toBe(9);

    const output = await outputWhen(stack.servers[1]!, (o) => lines(o).some((l) => l.mail === true && l.to === RITA.email));
    const mail = lines(output).find((l) => l.mail === true && l.to === RITA.email);
    expect(String(mail?.subject)).toContain('A recovery code was used');
    expect(String(mail?.text)).toContain('Recovery codes left: 9');
    expect(lines(output).find((l) => l.event === 'recovery_code_used')).toMatchObject({ audit: true, remaining: 9 });
    expect(output).not.toContain(codes[3]!.replace(/-/g, ''));

    // The same code again, as shown, on either instance: refused, with a message; no code for the client.
    for (const base of [a, b]) {
      const retry = await toRecoveryPage(RITA, base);
      const refused = await useCode(retry.browser, retry.page, base, codes[3]!);
      expectKind(refused, 'recovery');
      expect(alertText(refused)).toContain('not right, or was used already');
      expect(refused.location).toBeUndefined();
    }
    // Another code, with its hyphens, still works.
    const other = await toRecoveryPage(RITA, a);
    expectKind(await useCode(other.browser, other.page, a, codes[7]!), 'redirect');
    expect(await codesLeft(RITA)).toBe(8);
  });

  it('refuses a recovery code form without its CSRF token or from another browser, using up nothing', async () => {
    const { codes } = await enrol(RICK, a);
    const { browser, page } = await toRecoveryPage(RICK, a);
    const action = new URL(/<form[^>]*action="([^"]+)"/.exec(page.body)?.[1] ?? '', a).href;
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    for (const [who, form] of [
      [browser, { recovery_code: codes[0]! }],
      [browser, { recovery_code: codes[0]!, csrf_token: `${csrf}x` }],
      [new AddressedBrowser(), { recovery_code: codes[0]!, csrf_token: csrf }],
    ] as const) {
      const refused = await who.post(action, form);
      expect(refused.status, refused.body.slice(0, 200)).toBe(400);
      expect(refused.body).toContain('invalid_request');
    }
    expect(await codesLeft(RICK)).toBe(10);
    expectKind(await useCode(browser, page, a, codes[0]!), 'redirect');
  });

  it('gives a code sent at once from two browsers to instances A and B to exactly one', async () => {
    const { codes } = await enrol(RACE, a);
    for (const code of codes.slice(0, 3)) {
      const [atA, atB] = await Promise.all([toRecoveryPage(RACE, a), toRecoveryPage(RACE, b)]);
      const [fromA, fromB] = await Promise.all([useCode(atA.browser, atA.page, a, code), useCode(atB.browser, atB.page, b, code)]);
      expect([kindOf(fromA), kindOf(fromB)].sort(), `${describePage(fromA)} | ${describePage(fromB)}`).toEqual(['recovery', 'redirect']);
    }
    expect(await codesLeft(RACE)).toBe(7);
  });

  it('counts wrong recovery codes against the same throttle as authenticator codes', async () => {
    const { codes } = await enrol(TESS, a);
    const { browser, page } = await toRecoveryPage(TESS, a);
    let current = page;
    for (let i = 0; i < 2; i++) {
      current = await useCode(browser, current, a, 'zzzz-zzzz-zz');
      expectKind(current, 'recovery');
      expect(alertText(current)).toContain('not right');
    }
    // A third wrong guess, an authenticator code this time, in the same sign-in.
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(current.body)?.[1] ?? '';
    const action = new URL(/<form[^>]*action="([^"]+)"/.exec(current.body)?.[1] ?? '', a).href;
    const wrongApp = await browser.follow(await browser.post(action.replace(/\/recovery$/, '/otp'), { csrf_token: csrf, otp: '000000' }), a);
    expectKind(wrongApp, 'otp');
    const throttled = await useCode(browser, current, a, codes[0]!);
    expectKind(throttled, 'recovery');
    expect(alertText(throttled)).toContain(THROTTLED_TEXT);
    // Refused before it was judged: the code is not used up.
    expect(await codesLeft(TESS)).toBe(10);
  });

  describe('after the master secret changes', () => {
    let rotated: RunningServer | undefined;
    afterAll(async () => {
      await rotated?.stop();
    });

    it('still takes a code hashed under the previous secret (IDP_SECRET_PREVIOUS), once', async () => {
      const { codes } = await enrol(ROTA, a);
      rotated = await startServer({ ...stack.env, REDIS_URL, IDP_TRUST_PROXY: 'true', IDP_SECRET: 'c3'.repeat(32), IDP_SECRET_PREVIOUS: IDP_SECRET });
      const c = rotated.url;
      const { browser, started, page } = await toRecoveryPage(ROTA, c);
      const done = await useCode(browser, page, c, codes[1]!);
      expect((await redeem(c, codeOf(done, started.state), started.verifier)).status).toBe(200);
      const again = await toRecoveryPage(ROTA, c);
      expectKind(await useCode(again.browser, again.page, c, codes[1]!), 'recovery');
      expect(await codesLeft(ROTA)).toBe(9);
    });
  });

  it('`idp users reset-mfa`: the factors shown, then removed; tokens and the browser session end; the next sign-in enrols again', async () => {
    const { browser, started, shown, codes } = await enrol(RUTH, a);
    const done = await submit(browser, shown, a, {});
    const tokens = await redeem(a, codeOf(done, started.state), started.verifier);
    const refreshToken = String(tokens.body.refresh_token);
    const rotated = await refresh(b, refreshToken);
    expect(rotated.status, 'the refresh token works before the reset').toBe(200);
    const current = String(rotated.body.refresh_token);
    const used = await toRecoveryPage(RUTH, b);
    expectKind(await useCode(used.browser, used.page, b, codes[0]!), 'redirect');

    const before = JSON.parse((await stack.idpOk(['users', 'show', RUTH.username, '--json'])).stdout) as { second_factors: Array<Record<string, unknown>> };
    expect(before.second_factors).toEqual([
      { kind: 'totp', name: 'Authenticator app', created_at: expect.any(String), last_used_at: null },
      { kind: 'recovery_code', name: 'Recovery code', remaining: 9, created_at: expect.any(String), last_used_at: expect.any(String) },
    ]);
    const text = (await stack.idpOk(['users', 'show', RUTH.username])).stdout;
    expect(text).toMatch(/second_factors:\s+totp \(Authenticator app\), created \S+, last used never/);
    expect(text).toMatch(/recovery codes: 9 left, created \S+, last used 20\d\d-/);

    const reset = await runIdp(['users', 'reset-mfa', RUTH.username], { ...stack.env, LOG_LEVEL: 'info' });
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain(`user ${RUTH.username}: second factors removed (totp, recovery_code)`);
    const audit = lines(reset.stderr);
    expect(audit.find((l) => l.event === 'mfa_removed')).toMatchObject({ kinds: ['totp', 'recovery_code'], actor: 'cli' });
    expect(audit.find((l) => l.event === 'admin_change')).toMatchObject({ action: 'update', resource: 'user', fields: ['second_factors', 'must_enrol_mfa'] });

    // Evicted as for a lock: the refresh token on both instances, the browser session signed in with the factor.
    expectInvalidGrant(await refresh(a, current));
    expectInvalidGrant(await refresh(b, current));
    const after = JSON.parse((await stack.idpOk(['users', 'show', RUTH.username, '--json'])).stdout) as Record<string, unknown>;
    expect(after).toMatchObject({ second_factors: [], must_enrol_mfa: true, mfa_enrolled: false });
    expect(await codesLeft(RUTH)).toBe(0);
    const back = await startAuthorization(used.browser, a);
    expectKind(back.page, 'sign-in');
    // The next sign-in enrols again (new codes), and the old codes are gone.
    const fresh = await signIn(used.browser, back.page, a, RUTH.username, RUTH.password);
    expectKind(fresh, 'enrol');

    // Nothing left to reset: said so, nothing recorded.
    const again = await stack.idpOk(['users', 'reset-mfa', RUTH.username, '--json']);
    expect(JSON.parse(again.stdout)).toEqual({ username: RUTH.username, sub: expect.any(String), removed: [], must_enrol_mfa: true });
    expect(again.stderr).not.toContain('mfa_removed');
    const missing = await stack.idp(['users', 'reset-mfa', `nobody-${sfx}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`no user named nobody-${sfx}`);
  });
});
