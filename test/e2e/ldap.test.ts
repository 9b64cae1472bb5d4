/**
 * A deployment whose sign-in source is a directory (IDP_SIGN_IN_SOURCE=ldap) against a real
 * slapd: a directory user signs in through the pages over HTTP, the code is redeemed, and the ID
 * token names the user by the lower-case account name with idp "ldap", amr ["pwd"] and the
 * directory's groups as roles. /readyz and the sign-in page tell when the directory is down.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';
import { DIRECTORY_USERS, PEOPLE_DN, READER, slapdAvailable, startSlapd, type Slapd } from '../helpers/slapd.ts';
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
});
