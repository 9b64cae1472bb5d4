/**
 * A deployment whose sign-in source is a directory (IDP_SIGN_IN_SOURCE=ldap) against a real
 * slapd: a directory user signs in through the pages over HTTP, the code is redeemed, and the ID
 * token names the user by the lower-case account name with idp "ldap", amr ["pwd"] and the
 * directory's groups as roles. /readyz and the sign-in page tell when the directory is down.
 * Guesses are throttled per directory account, however its name is spelled, before any reaches
 * slapd: from one address, IDP_LOGIN_MAX_FAILURES (5, the default) wrong passwords at most,
 * even in a burst.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputWhen, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';
import { DIRECTORY_USERS, PEOPLE_DN, READER, slapdAvailable, startSlapd, type Slapd } from '../helpers/slapd.ts';
import { THROTTLED_TEXT, burst, inBatches, type OpenForm } from './account-support.ts';
import { Browser, authorizeThroughPages, codeFrom, codeRequest, decodeJwt, expectSignInPage, pkce, redeem, submitSignIn } from './code-flow-support.ts';

const CLIENT = { clientId: 'directory-app', secret: 'directory-app-secret-0123456789abcdef' };
const REDIRECT = 'https://directory-app.test/cb';
// The page's words for a source that does not answer ("The directory is unavailable right now.").
const UNAVAILABLE = /is unavailable right now/;

describe.runIf(slapdAvailable && postgresAvailable)('signing in through a directory (IDP_SIGN_IN_SOURCE=ldap)', () => {
  let slapd: Slapd;
  let db: TestDatabase;
  let server: RunningServer;

  beforeAll(async () => {
    slapd = await startSlapd();
    db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url, IDP_SECRET: 'e'.repeat(64), IDP_SIGN_IN_SOURCE: 'ldap',
      IDP_LDAP_URL: slapd.url, IDP_LDAP_BIND_DN: READER.dn, IDP_LDAP_BIND_PASSWORD: READER.password, IDP_LDAP_BASE_DN: PEOPLE_DN,
      LOG_LEVEL: 'info',
    };
    server = await startServer(env);
    await seedWith({
      clients: [{
        client_id: CLIENT.clientId, client_secret: CLIENT.secret, display_name: 'Directory app',
        grant_types: ['authorization_code'], scopes: ['openid', 'profile', 'email', 'roles'],
        redirect_uris: [REDIRECT], require_consent: false,
      }],
    }, env);
  });

  afterAll(async () => {
    await server?.stop();
    await db?.drop();
    await slapd?.close();
  });

  async function idTokenFor(user: { username: string; password: string }): Promise<Record<string, unknown>> {
    const { verifier, challenge } = pkce();
    const nonce = randomBytes(8).toString('hex');
    const url = codeRequest(server.url, CLIENT.clientId, REDIRECT, challenge, { scope: 'openid profile email roles', nonce });
    const page = await authorizeThroughPages(new Browser(), server.url, url, user);
    const token = await redeem(server.url, codeFrom(page, REDIRECT, `${server.url}/`), REDIRECT, verifier, CLIENT);
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    const { payload } = decodeJwt(String(token.body.id_token));
    expect(payload.nonce).toBe(nonce);
    return payload;
  }

  it('issues an ID token with the lower-case account name as sub, idp ldap, amr pwd and the groups as roles', async () => {
    expect(await idTokenFor({ username: 'ALICE@example.test', password: DIRECTORY_USERS.alice.password })).toMatchObject({
      sub: 'alice', idp: 'ldap', amr: ['pwd'], acr: 'urn:svc:ac:pwd', preferred_username: 'alice',
      given_name: 'Alice', family_name: 'Liddell', name: 'Alice Liddell', email: 'alice@example.test', role: ['Admins', 'Staff'],
    });
    expect(await idTokenFor({ username: 'EXAMPLE\\Bob.Smith', password: DIRECTORY_USERS.bob.password })).toMatchObject({
      sub: 'bob.smith', idp: 'ldap', amr: ['pwd'], acr: 'urn:svc:ac:pwd', role: 'Staff',
    });
  });

  it('says the password is wrong on the sign-in page, and never signs in with an empty one', async () => {
    const url = codeRequest(server.url, CLIENT.clientId, REDIRECT, pkce().challenge);
    for (const password of ['not the password', '']) {
      const browser = new Browser();
      const page = await browser.follow(await browser.get(url), server.url);
      expectSignInPage(page);
      const answer = await submitSignIn(browser, page, { username: 'alice', password });
      expectSignInPage(answer);
      expect(answer.body).toContain('The username or password is incorrect.');
    }
  });

  it('names the account in sign-in audit lines as the directory reads it, whatever form was typed; never the password', async () => {
    const signInLines = () => server.output().split('\n').filter((l) => l.includes('"event":"sign_in"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    // Lines of earlier tests' bursts are written asynchronously: count once they have settled.
    let before = -1;
    for (let i = 0; i < 40 && before !== signInLines().length; i++) {
      before = signInLines().length;
      await new Promise((r) => setTimeout(r, 100));
    }
    await idTokenFor({ username: 'EXAMPLE\\Bob.Smith', password: DIRECTORY_USERS.bob.password });
    const browser = new Browser();
    const page = await browser.follow(await browser.get(codeRequest(server.url, CLIENT.clientId, REDIRECT, pkce().challenge)), server.url);
    const wrongPassword = 'not the password of alice 5';
    expectSignInPage(await submitSignIn(browser, page, { username: ' Alice@Example.Test ', password: wrongPassword }));
    await outputWhen(server, () => signInLines().length >= before + 2);
    expect(signInLines().slice(before)).toMatchObject([
      { result: 'success', username: 'bob.smith', client_id: CLIENT.clientId },
      { result: 'failure', reason: 'invalid_credentials', username: 'alice', client_id: CLIENT.clientId },
    ]);
    expect(server.output()).not.toContain(wrongPassword);
  });

  it('reports the directory in /readyz, and answers 503 and an "unavailable" sign-in page while it is down', async () => {
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', database: 'ok', directory: 'ok' });
    const url = codeRequest(server.url, CLIENT.clientId, REDIRECT, pkce().challenge);
    const browser = new Browser();
    const page = await browser.follow(await browser.get(url), server.url);
    expectSignInPage(page);
    expect(page.body).not.toMatch(UNAVAILABLE);
    await slapd.stop();
    try {
      const down = await fetch(`${server.url}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({ status: 'unavailable', database: 'ok', directory: 'unavailable' });
      const answer = await submitSignIn(browser, page, { username: 'alice', password: DIRECTORY_USERS.alice.password });
      expectSignInPage(answer);
      expect(answer.body).toMatch(UNAVAILABLE);
    } finally {
      await slapd.start();
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });

  describe('throttling per directory account (IDP_LOGIN_MAX_FAILURES=5, the default)', () => {
    const WRONG = 'The username or password is incorrect.';
    const openSignIn = async (): Promise<OpenForm> => {
      const browser = new Browser();
      const page = await browser.follow(await browser.get(codeRequest(server.url, CLIENT.clientId, REDIRECT, pkce().challenge)), server.url);
      expectSignInPage(page);
      return { browser, page, base: server.url };
    };
    const tryPassword = async (username: string, password: string) => {
      const { browser, page } = await openSignIn();
      return submitSignIn(browser, page, { username, password });
    };

    it('counts Bob.Smith, EXAMPLE\\Bob.Smith, x\\bob.smith and bob.smith@any as one account: after 5 guesses over them, the right password under yet another spelling is refused', async () => {
      const spellings = ['Bob.Smith', 'EXAMPLE\\Bob.Smith', 'x\\bob.smith', 'bob.smith@any', 'CORP\\BOB.SMITH@example.test'];
      for (const username of spellings) {
        const page = await tryPassword(username, 'a wrong password');
        expectSignInPage(page);
        expect(page.body, username).toContain(WRONG);
      }
      const right = await tryPassword('OTHER\\bob.smith', DIRECTORY_USERS.bob.password);
      expectSignInPage(right);
      expect(right.body).toContain(THROTTLED_TEXT);
      // Another account is not held up.
      expect(await idTokenFor({ username: 'EXAMPLE\\alice', password: DIRECTORY_USERS.alice.password })).toMatchObject({ sub: 'alice' });
    });

    it('judges 5 of 100 concurrent guesses at one account under many spellings, and the right password at position 90 is refused', async () => {
      const spellings = ['CWhite', 'cwhite', 'EXAMPLE\\CWhite', 'x\\cwhite', 'cwhite@any', 'CWHITE@example.test', ' cWhite '];
      const forms = await inBatches(100, 10, () => openSignIn());
      const sent = await burst(forms, (i) => ({
        username: spellings[i % spellings.length] ?? '', password: i === 90 ? DIRECTORY_USERS.carol.password : `guess ${i}`,
      }), WRONG);
      expect(sent.other, 'every answer is a wrong password or the lock').toEqual([]);
      expect(sent.judged).toBe(5);
      expect(sent.throttled).toBe(95);
      expect(sent.answers[90]?.body).toContain(THROTTLED_TEXT);
    });
  });
});
