/**
 * The account page of a directory account (IDP_SIGN_IN_SOURCE=ldap, a real slapd), in the app
 * in this process: signed in through the pages with the directory password, the page offers
 * what applies (second factors, applications, sessions) and no password change, and a posted
 * password change is refused without reaching anything. The administration console opens to a
 * directory account whose group is `idp-admin` (its memberOf, the role claim), after it set up
 * the authenticator app; before the group it is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, readForm } from '../helpers/browser-http.ts';
import { signInToConsole, submit } from '../helpers/console.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';
import { BASE_DN, DIRECTORY_USERS, PEOPLE_DN, READER, slapdAvailable, startSlapd, type Slapd } from '../helpers/slapd.ts';
import { awayFromStepEnd, nowSeconds, totp } from '../helpers/totp.ts';

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

  it('opens the console to a directory account whose group is idp-admin, once it set up the authenticator app', async () => {
    // Bob: Staff only. Led to set up the authenticator app first (the console needs a second factor).
    const browser = new Browser();
    let page = await browser.follow(await browser.get(`${app.base}/admin`), app.base);
    page = await submit(browser, page, { username: 'bob.smith', password: DIRECTORY_USERS.bob.password }, app.base);
    expect(page.body, page.body.slice(0, 600)).toContain('name="otp"');
    const secret = (/<p class="secret"><code>([^<]+)<\/code>/.exec(page.body)?.[1] ?? '').replace(/\s/g, '');
    expect(secret).not.toBe('');
    await awayFromStepEnd();
    page = await submit(browser, page, { otp: await totp(secret, nowSeconds()) }, app.base);
    expect(page.body).toContain('>Continue<');
    page = await submit(browser, page, {}, app.base);
    expect(page.status).toBe(403);
    expect(page.body).not.toContain('<h1>Overview</h1>');

    // The directory puts him in the group idp-admin: his next sign-in opens the console.
    await slapd.modify(`dn: cn=idp-admin,ou=groups,${BASE_DN}\nchangetype: add\nobjectClass: groupOfNames\ncn: idp-admin\nmember: ${DIRECTORY_USERS.bob.dn}\n`);
    const { page: overview } = await signInToConsole(app.base, { username: 'bob.smith', password: DIRECTORY_USERS.bob.password, roles: [], totp_secret: secret });
    expect(overview.url).toBe(`${app.base}/admin`);
    expect(overview.status).toBe(200);
    expect(overview.body).toContain('<h1>Overview</h1>');
    expect(overview.body).toContain('Bob Smith');
  });
});
