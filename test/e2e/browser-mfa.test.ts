/**
 * A real browser through the second factor: Chromium (Debian's, driven by playwright-core) signs
 * in a user who must enrol in MFA, by the labels and button names of the README's Pages section, reads the
 * secret from the enrolment page's text, types the code computed from it, reads the recovery codes
 * shown once and continues to the relying party's callback; the next sign-in asks for a code, and
 * one after it takes a recovery code instead (which mails the user, and works once). Screenshots of the enrolment and the
 * second-factor pages go to test-artifacts/screenshots/ for people to look at.
 */
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, authorizeRequest, chromiumAvailable, useBrowserDeployment, watchConsole, type RelyingParty } from '../helpers/chromium.ts';
import { outputWhen, type RunningServer } from '../helpers/process.ts';
import { decodeJwt, postForm } from '../helpers/relying-party.ts';
import { awayFromStepEnd, totp } from '../helpers/totp.ts';

const chromiumReady = chromiumAvailable('the browser MFA suite');

const SECRET = 'b'.repeat(64);
const CLIENT_ID = 'browser-mfa-app';
const USERNAME = 'nora';
const PASSWORD = 'she enrols an authenticator 8';
const EMAIL = 'nora@example.test';

describe.runIf(chromiumReady)('a browser enrolling in and using the second factor', () => {
  const deployment = useBrowserDeployment({
    dataDirPrefix: 'idp-browser-mfa-',
    secret: SECRET,
    client: { client_id: CLIENT_ID, display_name: 'MFA App', scopes: ['openid', 'profile'], require_consent: false },
    user: { username: USERNAME, password: PASSWORD, name: 'Nora Enrolling', email: EMAIL, must_enrol_mfa: true },
    // The log mailer's lines (info) on the server's stdout stand for the mail a user receives.
    env: { LOG_LEVEL: 'info' },
  });
  const { newPage } = deployment;
  let rp: RelyingParty;
  let server: RunningServer;
  beforeAll(() => {
    ({ rp, server } = deployment);
  });
  /** The secret read from the enrolment page, for the second sign-in. */
  let enrolled = '';
  /** The recovery codes shown after enrolment. */
  let codes: string[] = [];

  async function signInWithPassword(page: Page, url: string): Promise<void> {
    await page.goto(url);
    await page.getByLabel('Username', { exact: true }).fill(USERNAME);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  /** Redeems the code of the callback URL (public client, PKCE) and returns the ID token's claims. */
  async function idTokenClaims(callback: string, verifier: string, rpUri: string): Promise<Record<string, unknown>> {
    const res = await postForm(`${server.url}/connect/token`, {
      grant_type: 'authorization_code', client_id: CLIENT_ID, code: new URL(callback).searchParams.get('code') ?? '',
      redirect_uri: rpUri, code_verifier: verifier,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return decodeJwt(res.body.id_token ?? '').payload;
  }

  it('enrols: QR code and secret shown, the code from that secret typed in, back at the callback', async () => {
    const page = await newPage();
    const problems = watchConsole(page);
    const request = authorizeRequest(server, rp, CLIENT_ID, 'openid profile');
    await signInWithPassword(page, request.url);

    const codeField = page.getByLabel('Authentication code', { exact: true });
    await codeField.waitFor();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('two-step verification');
    // The QR code is drawn (inline SVG), big enough to scan.
    const qr = page.locator('.qr svg');
    await expect(qr.count()).resolves.toBe(1);
    const box = await qr.boundingBox();
    expect(box?.width ?? 0).toBeGreaterThanOrEqual(120);
    expect(Math.abs((box?.width ?? 0) - (box?.height ?? 0))).toBeLessThan(2);

    // The secret, read from what the page says, in groups of four.
    const text = await page.locator('body').innerText();
    const shown = /\b((?:[A-Z2-7]{4} )+[A-Z2-7]{1,4})\b/.exec(text)?.[1] ?? '';
    expect(shown, text).not.toBe('');
    enrolled = shown.replace(/\s+/g, '');
    expect(enrolled.length).toBeGreaterThanOrEqual(26);

    await page.screenshot({ path: join(SCREENSHOTS, 'enrol.png'), fullPage: true, animations: 'disabled' });
    await awayFromStepEnd();
    await codeField.fill(await totp(enrolled, Math.floor(Date.now() / 1000)));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();

    // The recovery codes, shown this once, then Continue.
    const list = page.getByRole('list', { name: 'Recovery codes' });
    await list.waitFor();
    codes = (await list.getByRole('listitem').allInnerTexts()).map((c) => c.trim());
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{2}$/);
    await page.screenshot({ path: join(SCREENSHOTS, 'recovery-codes.png'), fullPage: true, animations: 'disabled' });
    await page.getByRole('button', { name: 'Continue', exact: true }).click();

    await page.waitForURL((url) => url.origin === `http://127.0.0.1:${rp.port}` && url.pathname === '/callback');
    const landed = new URL(page.url()).searchParams;
    expect(landed.get('error')).toBeNull();
    expect(landed.get('state')).toBe(request.state);
    expect(landed.get('iss')).toBe(`${server.url}/`);
    const claims = await idTokenClaims(page.url(), request.verifier, rp.redirectUri);
    expect(claims.amr).toEqual(['pwd', 'mfa']);
    expect(claims.acr).toBe('urn:svc:ac:mfa');
    expect(problems).toEqual([]);
  });

  it('asks for a code at the next sign-in, refuses a wrong one with an alert, takes the right one', async () => {
    expect(enrolled, 'enrolment ran first').not.toBe('');
    const page = await newPage();
    const problems = watchConsole(page);
    const request = authorizeRequest(server, rp, CLIENT_ID, 'openid profile');
    await signInWithPassword(page, request.url);

    const codeField = page.getByLabel('Authentication code', { exact: true });
    await codeField.waitFor();
    // The second-factor page, not enrolment: no QR code, no secret.
    await expect(page.locator('.qr').count()).resolves.toBe(0);
    await expect(page.getByText('Enter this key', { exact: false }).count()).resolves.toBe(0);
    const now = Math.floor(Date.now() / 1000);
    const wrong = (await totp(enrolled, now + 600)) === (await totp(enrolled, now)) ? '000000' : await totp(enrolled, now + 600);
    await codeField.fill(wrong);
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect((await alert.innerText()).trim().length).toBeGreaterThan(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'otp-error.png'), fullPage: true, animations: 'disabled' });

    // The enrolment code's step is used up: the next step's code (one step of drift) signs in.
    await awayFromStepEnd();
    await page.getByLabel('Authentication code', { exact: true }).fill(await totp(enrolled, Math.floor(Date.now() / 1000) + 30));
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
    await page.waitForURL((url) => url.origin === `http://127.0.0.1:${rp.port}` && url.pathname === '/callback');
    expect(new URL(page.url()).searchParams.get('state')).toBe(request.state);
    expect(problems).toEqual([]);
  });

  /** Password, then "Use a recovery code" on the second-factor page, then `typed`. */
  async function signInWithRecoveryCode(page: Page, url: string, typed: string): Promise<void> {
    await signInWithPassword(page, url);
    await page.getByRole('link', { name: 'Use a recovery code', exact: true }).click();
    await page.getByLabel('Recovery code', { exact: true }).fill(typed);
    await page.getByRole('button', { name: 'Verify', exact: true }).click();
  }

  it('signs in with a recovery code typed in capitals without hyphens; the user is mailed; the code then fails', async () => {
    expect(codes, 'enrolment ran first').toHaveLength(10);
    const page = await newPage();
    const problems = watchConsole(page);
    const request = authorizeRequest(server, rp, CLIENT_ID, 'openid profile');
    await signInWithRecoveryCode(page, request.url, codes[2]!.replace(/-/g, '').toUpperCase());
    await page.waitForURL((url) => url.origin === `http://127.0.0.1:${rp.port}` && url.pathname === '/callback');
    expect(new URL(page.url()).searchParams.get('state')).toBe(request.state);
    const claims = await idTokenClaims(page.url(), request.verifier, rp.redirectUri);
    expect(claims.amr).toEqual(['pwd', 'mfa']);
    expect(claims.acr).toBe('urn:svc:ac:mfa');

    const mailed = (output: string) => output.split('\n').filter((l) => l.includes('"mail":true')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const output = await outputWhen(server, (o) => mailed(o).some((m) => String(m.subject).includes('recovery code was used')));
    const mail = mailed(output).find((m) => String(m.subject).includes('recovery code was used'));
    expect(mail).toMatchObject({ to: EMAIL });
    expect(String(mail?.text)).toContain('Recovery codes left: 9');
    expect(output).not.toContain(codes[2]!.replace(/-/g, ''));

    // The same code, as shown, in another sign-in: refused with a message, no way on.
    const again = await newPage();
    await signInWithRecoveryCode(again, authorizeRequest(server, rp, CLIENT_ID, 'openid profile').url, codes[2]!);
    const alert = again.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('not right, or was used already');
    await expect(again.getByLabel('Recovery code', { exact: true }).getAttribute('aria-invalid')).resolves.toBe('true');
    expect(new URL(again.url()).origin).toBe(server.url);
    await again.screenshot({ path: join(SCREENSHOTS, 'recovery-code-refused.png'), fullPage: true, animations: 'disabled' });
    expect(problems).toEqual([]);
  });
});
