/**
 * The console with IDP_ADMIN_API=management: served at /admin of the management port (and not on
 * the public one), signing in through the public sign-in pages. The built-in client's callback is
 * the management origin's; the console session's cookie is set there; the browser session it
 * came from is the code's (the public cookie never reaches the management origin here: two cookie
 * jars), and its sign-out still ends the console session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, readForm } from '../helpers/browser-http.ts';
import { consoleUser, csrfOf, submit } from '../helpers/console.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';
import { freePort } from '../helpers/process.ts';
import { totp } from '../helpers/totp.ts';

const ADMIN = consoleUser('ada');

let app: InProcessApp;
let management: string;
beforeAll(async () => {
  const port = await freePort();
  management = `http://127.0.0.1:${port}`;
  app = await startInProcess({ env: { IDP_ADMIN_API: 'management', IDP_MANAGEMENT_PORT: String(port) }, seed: { api_scopes: [], clients: [], users: [ADMIN] } });
});
afterAll(async () => {
  await app?.close();
});

/** Signs in on the public origin with `publicBrowser`, the console's round trip in `consoleBrowser` (another cookie jar). */
async function signIn(publicBrowser: Browser, consoleBrowser: Browser) {
  const start = await consoleBrowser.get(`${management}/admin`);
  expect(start.status).toBe(303);
  expect(start.location).toContain(`${app.base}/connect/authorize?`);
  expect(new URL(start.location ?? '').searchParams.get('redirect_uri')).toBe(`${management}/admin/callback`);
  let page = await publicBrowser.follow(await publicBrowser.get(start.location ?? ''), app.base);
  page = await submit(publicBrowser, page, { username: ADMIN.username, password: ADMIN.password }, app.base);
  // A code used already in this 30-second step (the earlier test's sign-in) is followed by the next step's.
  for (let step = 0; step < 3 && page.body.includes('name="otp"'); step++) {
    page = await submit(publicBrowser, page, { otp: await totp(ADMIN.totp_secret ?? '', Math.floor(Date.now() / 1000) + step * 30) }, app.base);
  }
  expect(page.location, page.body.slice(0, 600)).toContain(`${management}/admin/callback?`);
  const callback = await consoleBrowser.get(page.location ?? '');
  expect(callback.status, callback.body.slice(0, 600)).toBe(303);
  return consoleBrowser.follow(callback, management);
}

describe('the console on the management port', () => {
  it('is not served on the public port', async () => {
    expect((await new Browser().get(`${app.base}/admin`)).status).toBe(404);
  });

  it('signs in through the public sign-in pages and opens on the management origin, with its own cookie there', async () => {
    const publicBrowser = new Browser();
    const consoleBrowser = new Browser();
    const overview = await signIn(publicBrowser, consoleBrowser);
    expect(overview.url).toBe(`${management}/admin`);
    expect(overview.status).toBe(200);
    for (const label of ['Overview', 'Clients', 'Ada Admin', 'Sign out']) expect(overview.body).toContain(label);
    expect(consoleBrowser.cookies.has('idp-admin')).toBe(true);
    expect([...publicBrowser.cookies.keys()]).not.toContain('idp-admin');
    expect((await consoleBrowser.get(`${management}/assets/console.css`)).status).toBe(200);
    // Its forms are read there too: "Sign out" with its CSRF token.
    const out = await consoleBrowser.post(`${management}/admin/sign-out`, { csrf_token: csrfOf(overview) });
    expect(out.status).toBe(200);
    expect(out.body).toContain('Signed out of the console');
  });

  it('ends once the public browser session it came from signed out', async () => {
    const publicBrowser = new Browser();
    const consoleBrowser = new Browser();
    await signIn(publicBrowser, consoleBrowser);
    expect((await consoleBrowser.get(`${management}/admin/clients`)).status).toBe(200);
    const confirm = await publicBrowser.get(`${app.base}/connect/logout`);
    const form = readForm(confirm.body, confirm.url);
    expect((await publicBrowser.post(form.action, form.fields)).status).toBeLessThan(400);
    const after = await consoleBrowser.get(`${management}/admin/clients`);
    expect(after.status).toBe(303);
    expect(after.location).toContain(`${app.base}/connect/authorize?`);
  });
});
