/**
 * The account page of a directory account (IDP_SIGN_IN_SOURCE=ldap, a real slapd), in the app
 * in this process: signed in through the pages with the directory password, the page offers
 * what applies (second factors, applications, sessions) and no password change, and a posted
 * password change is refused without reaching anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, readForm } from '../helpers/browser-http.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';
import { DIRECTORY_USERS, PEOPLE_DN, READER, slapdAvailable, startSlapd, type Slapd } from '../helpers/slapd.ts';

describe.runIf(slapdAvailable)('the account page of a directory account', () => {
  let slapd: Slapd;
  let app: InProcessApp;

  beforeAll(async () => {
    slapd = await startSlapd();
    app = await startInProcess({
      env: { IDP_SIGN_IN_SOURCE: 'ldap', IDP_LDAP_URL: slapd.url, IDP_LDAP_BIND_DN: READER.dn, IDP_LDAP_BIND_PASSWORD: READER.password, IDP_LDAP_BASE_DN: PEOPLE_DN },
    });
  });
  afterAll(async () => {
    await app?.close();
    await slapd?.close();
  });

  it('offers second factors, applications and sessions, and no password change', async () => {
    const browser = new Browser();
    const signInPage = await browser.follow(await browser.get(`${app.base}/account`), app.base);
    const { action, fields } = readForm(signInPage.body, signInPage.url);
    const page = await browser.follow(await browser.post(action, { ...fields, username: 'alice', password: DIRECTORY_USERS.alice.password }), app.base);
    expect(page.body, page.body.slice(0, 400)).toContain('<h1>Your account</h1>');
    for (const text of ['Set up authenticator app', 'Your applications', 'Sessions', 'This browser']) expect(page.body).toContain(text);
    expect(page.body).not.toContain('name="current_password"');
    expect(page.body).not.toContain('/account/password');

    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const refused = await browser.post(`${app.base}/account/password`, {
      csrf_token: csrf, current_password: DIRECTORY_USERS.alice.password, new_password: 'a new directory password 7', confirm_password: 'a new directory password 7',
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('not kept by this service');
    // The directory password still signs in.
    const again = new Browser();
    const second = await again.follow(await again.get(`${app.base}/account`), app.base);
    const form = readForm(second.body, second.url);
    const back = await again.follow(await again.post(form.action, { ...form.fields, username: 'alice', password: DIRECTORY_USERS.alice.password }), app.base);
    expect(back.body).toContain('<h1>Your account</h1>');
  });
});
