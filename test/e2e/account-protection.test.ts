/**
 * Account protection from outside, on one `idp serve` with IDP_LOGIN_MAX_FAILURES=3,
 * IDP_LOGIN_MAX_FAILURES_PER_ADDRESS=8, IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT=6 and
 * IDP_TRUST_PROXY=true (each browser presents its own address in X-Forwarded-For): the forced
 * password change and its policy, the argon2 rehash at sign-in, throttling by name at an
 * address, by name over every address and by address (the same answer for names with and
 * without an account; no more guesses judged than the limit under a concurrent burst), the `idp users`
 * commands taking effect at the next sign-in and the next refresh, and sign-in timing that does
 * not tell known from unknown names.
 */
import { hash, verify } from '@node-rs/argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/services.ts';
import {
  AddressedBrowser, THROTTLED_TEXT, UNRECOGNISED_TEXT, alertText, burst, codeOf, decodeJwt, describePage, expectInvalidGrant, expectKind, kindOf,
  inBatches, passwordTokens, redeem, refresh, signIn, startAuthorization, startStack, submit, type OpenForm, type Page, type SeedUser,
  type Stack,
} from './account-support.ts';

const PAULA: SeedUser = { username: 'paula', password: 'tangerine submarine 77', must_change_password: true };
const RITA: SeedUser = { username: 'rita', password: 'she keeps a long password 1' };
const RON: SeedUser = { username: 'ron', password: 'he has an old style hash 2' };
const TOM: SeedUser = { username: 'tom', password: 'he types it wrong often 3' };
const UMA: SeedUser = { username: 'uma', password: 'she signs in just fine 4' };
const ALICE: SeedUser = { username: 'alice', password: 'correct horse battery staple' };
const SAM: SeedUser = { username: 'sam', password: 'they will be removed soon 5' };
const VIC: SeedUser = { username: 'vic', password: 'he shares an address 6' };
const WES: SeedUser = { username: 'wes', password: 'he is guessed at in a burst 7' };
const TIMING: SeedUser[] = Array.from({ length: 8 }, (_, i) => ({ username: `timing-${i}`, password: `timing password number ${i}` }));

const NEW_PASSWORD = 'violet orchestra lantern 2031';

describe.runIf(postgresAvailable)('account protection', () => {
  let stack: Stack;
  let base: string;

  beforeAll(async () => {
    stack = await startStack([PAULA, RITA, RON, TOM, UMA, ALICE, SAM, VIC, WES, ...TIMING], {
      IDP_LOGIN_MAX_FAILURES: '3', IDP_LOGIN_MAX_FAILURES_PER_ADDRESS: '8', IDP_LOGIN_MAX_FAILURES_PER_ACCOUNT: '6', IDP_TRUST_PROXY: 'true',
    });
    base = stack.servers[0]?.url ?? '';
  });
  afterAll(async () => {
    await stack?.stop();
  });

  async function userRow(username: string) {
    const rows = await stack.sql<{ password_hash: string; must_change_password: boolean; locked: boolean }>(
      'SELECT password_hash, must_change_password, locked FROM users WHERE username = $1', [username]);
    return rows[0];
  }

  /** A fresh sign-in from `browser`; returns what the service answers to the password. */
  async function tryPassword(browser: AddressedBrowser, username: string, password: string) {
    const started = await startAuthorization(browser, base);
    expectKind(started.page, 'sign-in');
    return { page: await signIn(browser, started.page, base, username, password), started };
  }

  describe('password change', () => {
    it('refuses each policy breach with its message, keeps the flag, then takes a good password and signs in', async () => {
      const browser = new AddressedBrowser();
      const { page, started } = await tryPassword(browser, PAULA.username, PAULA.password);
      expectKind(page, 'password');
      expect(page.body).toMatch(/<label[^>]*for="new_password"[^>]*>New password<\/label>/);
      expect(page.body).toMatch(/<label[^>]*for="confirm_password"[^>]*>Confirm password<\/label>/);
      expect(page.body).toMatch(/<button[^>]*type="submit"[^>]*>Change password<\/button>/);
      const before = await userRow(PAULA.username);
      expect(before?.must_change_password).toBe(true);

      const refusals: Array<[string, string, string, RegExp]> = [
        ['the two fields differ', NEW_PASSWORD, `${NEW_PASSWORD}!`, /match/i],
        ['shorter than 12 characters', 'short pw 11', 'short pw 11', /12 characters/],
        ['contains the username', 'my name is PAULA really', 'my name is PAULA really', /username/i],
        ['a common password', 'PasswordPassword', 'PasswordPassword', /common/i],
        ['another common one', '1qaz2wsx3edc', '1qaz2wsx3edc', /common/i],
        ['the current password', PAULA.password, PAULA.password, /before|current|same/i],
      ];
      let current: Page = page;
      const messages = new Set<string>();
      for (const [rule, newPassword, confirm, message] of refusals) {
        current = await submit(browser, current, base, { new_password: newPassword, confirm_password: confirm });
        expect(kindOf(current), `${rule}: ${describePage(current)}`).toBe('password');
        expect(alertText(current), rule).toMatch(message);
        messages.add(alertText(current));
        const row = await userRow(PAULA.username);
        expect(row?.must_change_password, `${rule}: flag stays set`).toBe(true);
        expect(row?.password_hash, `${rule}: password unchanged`).toBe(before?.password_hash);
      }
      expect(messages.size, 'one message per rule (the two common ones share it)').toBe(refusals.length - 1);

      const done = await submit(browser, current, base, { new_password: NEW_PASSWORD, confirm_password: NEW_PASSWORD });
      const tokens = await redeem(base, codeOf(done, started.state), started.verifier);
      expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
      expect(decodeJwt(tokens.body.id_token).payload.amr).toEqual(['pwd']);
      const after = await userRow(PAULA.username);
      expect(after?.must_change_password).toBe(false);
      expect(after?.password_hash).not.toBe(before?.password_hash);

      // The old password no longer works; the new one signs in without the password page.
      const old = await tryPassword(new AddressedBrowser(), PAULA.username, PAULA.password);
      expectKind(old.page, 'sign-in');
      expect(alertText(old.page)).not.toBe('');
      const fresh = await tryPassword(new AddressedBrowser(), PAULA.username, NEW_PASSWORD);
      codeOf(fresh.page, fresh.started.state);
    });
  });

  describe('argon2 rehash at sign-in', () => {
    it('moves an m=4096,t=1,p=1 hash to m=19456,t=2,p=1 at the first successful sign-in only', async () => {
      const weak = await hash(RON.password, { memoryCost: 4096, timeCost: 1, parallelism: 1, algorithm: 2 });
      expect(weak).toMatch(/^\$argon2id\$v=19\$m=4096,t=1,p=1\$/);
      await stack.sql('UPDATE users SET password_hash = $1 WHERE username = $2', [weak, RON.username]);

      // A wrong password changes nothing.
      const wrong = await tryPassword(new AddressedBrowser(), RON.username, 'not the password at all');
      expectKind(wrong.page, 'sign-in');
      expect((await userRow(RON.username))?.password_hash).toBe(weak);

      const ok = await tryPassword(new AddressedBrowser(), RON.username, RON.password);
      codeOf(ok.page, ok.started.state);
      const rehashed = (await userRow(RON.username))?.password_hash ?? '';
      expect(rehashed).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect(await verify(rehashed, RON.password)).toBe(true);

      // The new hash signs in, and is not redone again.
      const again = await tryPassword(new AddressedBrowser(), RON.username, RON.password);
      codeOf(again.page, again.started.state);
      expect((await userRow(RON.username))?.password_hash).toBe(rehashed);
    });
  });

  describe('throttling', () => {
    /** The page without what differs by request (tokens, interaction ids, also in the "Forgot password?" link, the typed name). */
    const normalised = (page: Page, username: string) =>
      page.body.replace(/value="[^"]*"/g, 'value=""').replace(/\/interaction\/[^"/]+/g, '/interaction/X').replace(/interaction=[^"&]+/g, 'interaction=X').replaceAll(username, 'NAME');

    it('locks a name with an account and a name without after 3 failures at an address, with the same page; even the right password is refused there', async () => {
      const browser = new AddressedBrowser();
      const thirds: Page[] = [];
      const locked: Page[] = [];
      for (const name of [TOM.username, 'ghost']) {
        for (let i = 1; i <= 3; i++) {
          const { page } = await tryPassword(browser, name, `wrong guess ${i}`);
          expectKind(page, 'sign-in');
          expect(alertText(page), `${name} failure ${i}`).not.toContain(THROTTLED_TEXT);
          if (i === 3) thirds.push(page);
        }
        const { page } = await tryPassword(browser, name, 'wrong guess 4');
        expectKind(page, 'sign-in');
        expect(alertText(page), name).toContain(THROTTLED_TEXT);
        locked.push(page);
      }
      const [tomThird, ghostThird] = thirds as [Page, Page];
      const [tomLocked, ghostLocked] = locked as [Page, Page];
      expect(alertText(tomThird)).toBe(alertText(ghostThird));
      expect(tomLocked.status).toBe(ghostLocked.status);
      expect(normalised(tomLocked, TOM.username)).toBe(normalised(ghostLocked, 'ghost'));

      // Tom's right password from this address: still the same lock page, no code.
      const { page: again } = await tryPassword(browser, TOM.username, TOM.password);
      expectKind(again, 'sign-in');
      expect(alertText(again)).toContain(THROTTLED_TEXT);
      expect(normalised(again, TOM.username)).toBe(normalised(ghostLocked, 'ghost'));

      // The lock is on the name as typed, whatever its case and surrounding spaces.
      for (const variant of ['TOM', ' Tom ']) {
        const { page } = await tryPassword(browser, variant, TOM.password);
        expectKind(page, 'sign-in');
        expect(alertText(page), JSON.stringify(variant)).toContain(THROTTLED_TEXT);
      }

      // From another address, Tom is not locked out by these guesses.
      const tom = await tryPassword(new AddressedBrowser(), ' Tom ', TOM.password);
      codeOf(tom.page, tom.started.state);

      // Another name signs in from another address.
      const uma = await tryPassword(new AddressedBrowser(), UMA.username, UMA.password);
      codeOf(uma.page, uma.started.state);
    });

    it('locks an address after 8 failures over different names, for every name, and only that address', async () => {
      const browser = new AddressedBrowser();
      for (let i = 1; i <= 8; i++) {
        const { page } = await tryPassword(browser, `stranger-${i}`, 'some guess');
        expectKind(page, 'sign-in');
        expect(alertText(page), `failure ${i}`).not.toContain(THROTTLED_TEXT);
      }
      const blocked = await tryPassword(browser, VIC.username, VIC.password);
      expectKind(blocked.page, 'sign-in');
      expect(alertText(blocked.page)).toContain(THROTTLED_TEXT);

      const elsewhere = await tryPassword(new AddressedBrowser(), VIC.username, VIC.password);
      codeOf(elsewhere.page, elsewhere.started.state);
    });
  });

  describe('throttling under a concurrent burst (IDP_LOGIN_MAX_FAILURES=3, per address 8, per account 6)', () => {
    const BURST = 120;
    const WRONG = 'The username or password is incorrect.';

    /** `count` fresh interactions at the sign-in page, each in its own browser from `address(i)`. */
    const signInForms = (count: number, address: (i: number) => string | undefined) =>
      inBatches(count, 12, async (i): Promise<OpenForm> => {
        const browser = new AddressedBrowser(address(i));
        const { page } = await startAuthorization(browser, base);
        expectKind(page, 'sign-in');
        return { browser, page, base };
      });

    it(`judges 6 of ${BURST} concurrent passwords for one name (each from its own address); the right one at position 90 is refused`, async () => {
      const forms = await signInForms(BURST, () => undefined);
      const sent = await burst(forms, (i) => ({ username: WES.username, password: i === 90 ? WES.password : `guess ${i}` }), WRONG);
      expect(sent.other.map((i) => describePage(sent.answers[i]!)), 'every answer is a wrong password or the lock').toEqual([]);
      expect(sent.judged).toBe(6);
      expect(sent.throttled).toBe(BURST - 6);
      expect(kindOf(sent.answers[90]!), describePage(sent.answers[90]!)).toBe('sign-in');
      expect(alertText(sent.answers[90]!)).toContain(UNRECOGNISED_TEXT);
    });

    it(`judges 8 of ${BURST} concurrent guesses over ${BURST} names from one address`, async () => {
      const address = new AddressedBrowser().address;
      const forms = await signInForms(BURST, () => address);
      const sent = await burst(forms, (i) => ({ username: `sprayed-${i}`, password: 'Summer2026!' }), WRONG);
      expect(sent.other.map((i) => describePage(sent.answers[i]!))).toEqual([]);
      expect(sent.judged).toBe(8);
      expect(sent.throttled).toBe(BURST - 8);
    });
  });

  describe('account commands take effect at the next sign-in and the next refresh', () => {
    it('lock: refresh invalid_grant, the session and the password are refused; unlock: signs in again', async () => {
      const browser = new AddressedBrowser();
      const tokens = await passwordTokens(base, ALICE, browser);
      const refreshToken = String(tokens.refresh_token);

      await stack.idpOk(['users', 'lock', ALICE.username]);
      expectInvalidGrant(await refresh(base, refreshToken));
      // The browser's session does not carry on either.
      const reuse = await startAuthorization(browser, base);
      expectKind(reuse.page, 'sign-in');
      const { page } = await tryPassword(new AddressedBrowser(), ALICE.username, ALICE.password);
      expectKind(page, 'sign-in');
      expect(alertText(page)).not.toBe('');

      await stack.idpOk(['users', 'unlock', ALICE.username]);
      const again = await passwordTokens(base, ALICE);
      expect((await refresh(base, String(again.refresh_token))).status).toBe(200);
    });

    it('require-password-change: refresh invalid_grant, and the next sign-in shows the password page', async () => {
      const browser = new AddressedBrowser();
      const tokens = await passwordTokens(base, RITA, browser);
      await stack.idpOk(['users', 'require-password-change', RITA.username]);
      expectInvalidGrant(await refresh(base, String(tokens.refresh_token)));
      // The existing session gives no code: it must sign in, then change the password.
      const reuse = await startAuthorization(browser, base);
      expect(kindOf(reuse.page), describePage(reuse.page)).not.toBe('redirect');
      const { page } = await tryPassword(new AddressedBrowser(), RITA.username, RITA.password);
      expectKind(page, 'password');
    });

    it('remove: refresh invalid_grant, and the password no longer signs in', async () => {
      const tokens = await passwordTokens(base, SAM);
      await stack.idpOk(['users', 'remove', SAM.username]);
      expectInvalidGrant(await refresh(base, String(tokens.refresh_token)));
      const { page } = await tryPassword(new AddressedBrowser(), SAM.username, SAM.password);
      expectKind(page, 'sign-in');
      expect(alertText(page)).not.toBe('');
    });
  });

  describe('timing', () => {
    it('answers a known name with a wrong password and an unknown name in about the same time', async () => {
      /** Milliseconds for the password post alone, from an address and a name used once. */
      async function timed(username: string): Promise<number> {
        const browser = new AddressedBrowser();
        const started = await startAuthorization(browser, base);
        const form = /<form[^>]*action="([^"]*)"/.exec(started.page.body)?.[1] ?? '';
        const csrf = /name="csrf_token" value="([^"]*)"/.exec(started.page.body)?.[1] ?? '';
        const t0 = performance.now();
        const page = await browser.post(new URL(form, started.page.url).href, { csrf_token: csrf, username, password: 'a wrong password' });
        const elapsed = performance.now() - t0;
        expectKind(page, 'sign-in');
        expect(alertText(page)).not.toContain(THROTTLED_TEXT);
        return elapsed;
      }
      await timed(TIMING[7]?.username ?? ''); // warm-up
      const known: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 7; i++) {
        known.push(await timed(TIMING[i]?.username ?? ''));
        unknown.push(await timed(`nobody-${i}`));
      }
      const median = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)] ?? 0;
      const ratio = median(known) / median(unknown);
      expect(ratio, `known ${known.map(Math.round)} ms, unknown ${unknown.map(Math.round)} ms`).toBeGreaterThanOrEqual(0.5);
      expect(ratio, `known ${known.map(Math.round)} ms, unknown ${unknown.map(Math.round)} ms`).toBeLessThanOrEqual(2);
    });
  });
});
