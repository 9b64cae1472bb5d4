/**
 * Passkeys in a real browser: Chromium with a virtual authenticator (DevTools Protocol) enrols a
 * passkey at the enrolment step and signs in with it after the password; a missing user
 * verification, an old assertion sent again and a signature counter that went back are refused
 * (the last with its audit line). The pages that use WebAuthn, and only they, allow the
 * service's own script; they pass axe at 1280 and 390 px.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCREENSHOTS, authorizeRequest, chromiumAvailable, launchChromium, startRelyingParty, watchConsole, type RelyingParty } from '../helpers/chromium.ts';
import { freePort, runIdp, seedWith, startServer, tempDir, type RunningServer } from '../helpers/process.ts';
import { PASSWORD, atCallback, passkeyPage, auditLines, idTokenClaims, signInWithPassword, usePasskey, type VirtualAuthenticator } from './passkey-support.ts';

const chromiumReady = chromiumAvailable('the browser passkeys suite');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const CLIENT_ID = 'passkey-app';
const USERNAME = 'pia';
const EMAIL = 'pia@example.test';

describe.runIf(chromiumReady)('passkeys in a browser', () => {
  const data = tempDir('idp-browser-passkeys-');
  let rp: RelyingParty;
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let authenticator: VirtualAuthenticator;
  /** The service as the browser reaches it (a domain name: WebAuthn takes no IP address). */
  let base = '';

  /** The policy of the page shown now. */
  let cspOf: (p: Page) => Promise<string> = async () => '';

  beforeAll(async () => {
    rp = await startRelyingParty();
    const port = await freePort();
    base = `http://localhost:${port}`;
    const env = { IDP_DATA_DIR: data.path, IDP_SECRET: 'c3'.repeat(32), IDP_BASE_URL: base, LOG_LEVEL: 'info' };
    await seedWith({
      api_scopes: [],
      clients: [{
        client_id: CLIENT_ID, display_name: 'Passkey App', enabled: true, grant_types: ['authorization_code'], scopes: ['openid', 'profile'],
        require_consent: false, redirect_uris: [rp.redirectUri], post_logout_redirect_uris: [], cors_origins: [],
      }],
      users: [{ username: USERNAME, password: PASSWORD, name: 'Pia Passkey', must_enrol_mfa: true, email: EMAIL }],
    }, env);
    server = await startServer(env, undefined, { port });
    browser = await launchChromium();
    let policy: () => string;
    ({ page, authenticator, policy } = await passkeyPage(browser));
    cspOf = async (p: Page) => (p === page ? policy() : '');
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await rp?.close();
    data.remove();
  });

  const request = (extra = '') => {
    const made = authorizeRequest({ ...server, url: base }, rp, CLIENT_ID, 'openid profile');
    return { ...made, url: made.url + extra };
  };

  async function axeViolations(name: string): Promise<string[]> {
    const found: string[] = [];
    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(viewport);
      if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
      const violations = await page.evaluate(async () => {
        const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: Array<{ id: string }> }> } }).axe;
        return (await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })).violations.map((v) => v.id);
      });
      found.push(...violations.map((id) => `${name} at ${viewport.width}px: ${id}`));
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    return found;
  }

  /** The sign-in that follows the first: prompt=login asks for the password again, then the passkey. */
  async function toSecondFactorPage(): Promise<ReturnType<typeof request>> {
    const made = request('&prompt=login');
    await signInWithPassword(page, made.url, USERNAME);
    await page.getByRole('button', { name: 'Use a passkey', exact: true }).waitFor();
    return made;
  }

  it('enrols a passkey instead of an app, and signs in with amr pwd+mfa', async () => {
    const problems = watchConsole(page);
    const made = request();
    await signInWithPassword(page, made.url, USERNAME);
    await page.getByRole('button', { name: 'Set up a passkey', exact: true }).waitFor();
    expect(await cspOf(page)).toMatch(/(^|; )script-src 'self'(;|$)/);
    expect(await axeViolations('enrolment')).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'enrol-passkey.png'), fullPage: true, animations: 'disabled' });

    await usePasskey(page, 'Set up a passkey');
    // The first second factor, as with the app: ten recovery codes shown once, then Continue.
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    const codes = await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').allTextContents();
    expect(codes.map((c) => c.trim())).toEqual(Array.from({ length: 10 }, () => expect.stringMatching(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{2}$/)));
    expect(await axeViolations('recovery codes after a passkey')).toEqual([]);
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.waitForURL(atCallback(rp));
    const output = server.output();
    expect(auditLines(output, 'mfa_added')).toEqual([expect.objectContaining({ kind: 'passkey' })]);
    expect(auditLines(output, 'recovery_codes_generated')).toEqual([expect.objectContaining({ count: 10 })]);
    const mails = output.split('\n').filter((l) => l.includes('"mail":true')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(mails).toEqual([expect.objectContaining({ to: EMAIL, subject: expect.stringContaining('A second factor was added') })]);
    expect(String(mails[0]?.text)).toContain('A passkey was set up, with 10 new recovery codes.');
    const claims = await idTokenClaims(base, CLIENT_ID, page.url(), made.verifier, rp.redirectUri);
    expect(claims.amr).toEqual(['pwd', 'mfa']);
    expect(claims.acr).toBe('urn:svc:ac:mfa');
    expect(await authenticator.credentials()).toHaveLength(1);
    expect(problems).toEqual([]);
    expect(auditLines(server.output(), 'sign_in').at(-1)).toMatchObject({ result: 'success', amr: ['pwd', 'mfa'] });

    // Administrators see it, without its key.
    const shown = await runIdp(['users', 'show', USERNAME, '--json'], { IDP_DATA_DIR: data.path, IDP_SECRET: 'c3'.repeat(32) });
    expect(shown.code, shown.stderr).toBe(0);
    const user = JSON.parse(shown.stdout) as { must_enrol_mfa: boolean; second_factors: Array<Record<string, unknown>> };
    // An administrator's requirement stays a property of the account, now met.
    expect(user.must_enrol_mfa).toBe(true);
    expect(user.second_factors.filter((f) => f.kind === 'passkey')).toEqual([{ kind: 'passkey', name: 'Passkey', created_at: expect.any(String), last_used_at: null }]);
    const text = await runIdp(['users', 'show', USERNAME], { IDP_DATA_DIR: data.path, IDP_SECRET: 'c3'.repeat(32) });
    expect(text.stdout).toMatch(/^second_factors: +passkey \(Passkey\), created \d{4}-\d\d-\d\dT[\d:.]+Z, last used never$/m);
    expect(text.stdout.match(/passkey \(/g)).toHaveLength(1);
    expect(text.stdout).toMatch(/^ +recovery codes: 10 left, /m);
    expect(shown.stdout + text.stdout).not.toMatch(/public|pQEC/i);
  });

  let replayable = { body: '', url: '' };
  it('offers "Use a passkey" after the password and signs in with it', async () => {
    const made = await toSecondFactorPage();
    expect(await cspOf(page)).toMatch(/script-src 'self'/);
    await expect(page.getByLabel('Authentication code', { exact: true }).count()).resolves.toBe(0);
    // The codes made with the passkey are the other way on.
    await expect(page.getByRole('link', { name: 'Use a recovery code' }).count()).resolves.toBe(1);
    expect(await axeViolations('second factor')).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, 'otp-passkey.png'), fullPage: true, animations: 'disabled' });
    replayable = await usePasskey(page, 'Use a passkey');
    await page.waitForURL(atCallback(rp));
    const claims = await idTokenClaims(base, CLIENT_ID, page.url(), made.verifier, rp.redirectUri);
    expect(claims.amr).toEqual(['pwd', 'mfa']);
    expect(claims.acr).toBe('urn:svc:ac:mfa');
  });

  it('keeps every other page free of script', async () => {
    await page.goto(request('&prompt=login').url);
    await page.getByLabel('Password', { exact: true }).waitFor();
    const policy = await cspOf(page);
    expect(policy).toMatch(/default-src 'none'/);
    expect(policy).not.toMatch(/script-src/);
    const script = await page.request.get(`${base}/assets/passkeys.js`);
    expect(script.headers()['content-type']).toMatch(/^text\/javascript/);
  });

  const failures = () => auditLines(server.output(), 'sign_in').filter((line) => line.step === 'passkey');

  it('refuses an assertion sent again: the same post, and its answer against the challenge of another page', async () => {
    expect(replayable.body).not.toBe('');
    const again = await page.request.post(replayable.url, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, data: replayable.body, maxRedirects: 0 });
    expect(again.status()).toBe(400);
    expect(again.headers().location).toBeUndefined();

    const before = failures().length;
    await toSecondFactorPage();
    const old = new URLSearchParams(replayable.body).get('passkey_response') ?? '';
    expect(old).not.toBe('');
    await page.evaluate((response) => {
      const form = document.querySelector<HTMLFormElement>('form[data-passkey]')!;
      (form.elements.namedItem('passkey_response') as HTMLInputElement).value = response;
      form.submit();
    }, old);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').innerText()).toContain('That passkey could not be used');
    expect(failures().slice(before)).toEqual([expect.objectContaining({ result: 'failure', step: 'passkey', reason: 'not_verified', username: USERNAME })]);
  });

  it('refuses an assertion without user verification', async () => {
    const before = failures().length;
    await toSecondFactorPage();
    await authenticator.setUserVerified(false);
    try {
      // The page asks for verification; a browser that did not would still be refused by the server.
      await page.evaluate(() => {
        const form = document.querySelector<HTMLFormElement>('form[data-passkey]')!;
        form.dataset.options = JSON.stringify({ ...JSON.parse(form.dataset.options ?? '{}'), userVerification: 'discouraged' });
      });
      await usePasskey(page, 'Use a passkey');
      await page.getByRole('alert').waitFor();
      expect(page.url()).not.toContain('/callback');
      expect(failures().slice(before)).toEqual([expect.objectContaining({ result: 'failure', step: 'passkey', reason: 'not_verified' })]);
    } finally {
      await authenticator.setUserVerified(true);
    }
  });

  const idp = (args: string[]) => runIdp(args, { IDP_DATA_DIR: data.path, IDP_SECRET: 'c3'.repeat(32) });

  it('counts a passkey as MFA set up: listed so, and enough for an administrator\'s require-mfa', async () => {
    const listed = await idp(['users', 'list', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual({ users: [expect.objectContaining({ username: USERNAME, mfa_enrolled: true })] });
    // The table's last two columns: LOCKED, MFA.
    expect((await idp(['users', 'list'])).stdout).toMatch(new RegExp(`^${USERNAME} .* no +yes$`, 'm'));
    expect((await idp(['users', 'require-mfa', USERNAME])).code).toBe(0);
    // The flag asks for a second factor, which the passkey is: it signs in, and tokens are issued.
    const made = await toSecondFactorPage();
    await usePasskey(page, 'Use a passkey');
    await page.waitForURL(atCallback(rp));
    expect((await idTokenClaims(base, CLIENT_ID, page.url(), made.verifier, rp.redirectUri)).amr).toEqual(['pwd', 'mfa']);
  });

  it('refuses a counter that went back, with the audit line passkey_counter_regressed', async () => {
    const [credential] = await authenticator.credentials();
    expect(credential?.signCount).toBeGreaterThan(1);
    await authenticator.cdp.send('WebAuthn.removeCredential', { authenticatorId: authenticator.id, credentialId: credential!.credentialId });
    await authenticator.cdp.send('WebAuthn.addCredential', { authenticatorId: authenticator.id, credential: { ...credential!, signCount: 0 } as never });
    await toSecondFactorPage();
    await usePasskey(page, 'Use a passkey');
    await page.getByRole('alert').waitFor();
    expect(page.url()).not.toContain('/callback');
    const [line] = auditLines(server.output(), 'passkey_counter_regressed');
    expect(line).toMatchObject({ audit: true, user_id: expect.any(String), factor_id: expect.any(String), presented_count: 1 });
    expect(Number(line?.stored_count)).toBeGreaterThan(1);
    expect(JSON.stringify(line)).not.toMatch(/publicKey|public_key|privateKey/);
  });

  it('idp users reset-mfa removes the passkey with the recovery codes; the next sign-in enrols again', async () => {
    const reset = await idp(['users', 'reset-mfa', USERNAME, '--json']);
    expect(reset.code, reset.stderr).toBe(0);
    const document = JSON.parse(reset.stdout) as { removed: string[]; must_enrol_mfa: boolean };
    expect([...document.removed].sort()).toEqual(['passkey', 'recovery_code']);
    expect(document.must_enrol_mfa).toBe(true);
    const shown = JSON.parse((await idp(['users', 'show', USERNAME, '--json'])).stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({ mfa_enrolled: false, second_factors: [] });
    expect(shown).not.toHaveProperty('passkeys');
    await signInWithPassword(page, request('&prompt=login').url, USERNAME);
    await page.getByRole('button', { name: 'Set up a passkey', exact: true }).waitFor();
  });
});
