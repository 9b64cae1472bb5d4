/**
 * The administration console's entry, from outside: /admin signs in through the service's own
 * sign-in pages (authorization code with PKCE, a built-in client that is no row of `clients`),
 * needs a second factor and a console role, and keeps a session of its own that ends when idle,
 * at its absolute limit (the clock is moved), when the user is locked, or with "Sign out".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, readForm } from '../helpers/browser-http.ts';
import { consoleUser, csrfOf, signInToConsole, submit } from '../helpers/console.ts';
import { totp } from '../helpers/totp.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';

const ADMIN = consoleUser('ada');
const AUDITOR = consoleUser('audrey', ['idp-auditor']);
const HOOKS = consoleUser('hook', ['idp-webhooks']);
const NOBODY = consoleUser('nobody', ['gardener']);
const NOVICE = consoleUser('novice', ['idp-admin'], { secondFactor: false });
const LOCKABLE = consoleUser('lockable');

let offsetMs = 0; // moved by the tests
const clock = () => Date.now() + offsetMs;
const serverSeconds = () => Math.floor(clock() / 1000);

let app: InProcessApp;
beforeAll(async () => {
  app = await startInProcess({ clock, seed: { api_scopes: [], clients: [], users: [ADMIN, AUDITOR, HOOKS, NOBODY, NOVICE, LOCKABLE] } });
});
afterAll(async () => {
  await app?.close();
});

const signIn = (user: typeof ADMIN, path?: string) => signInToConsole(app.base, user, { serverSeconds, ...(path ? { path } : {}) });

describe('the console entry', () => {
  it('signs an idp-admin in through the sign-in pages with a second factor, and shows the overview with the navigation', async () => {
    const { page } = await signIn(ADMIN);
    expect(page.status, app.logs().split('\n').filter((l) => l.includes('"level":50')).join('\n')).toBe(200);
    expect(page.url).toBe(`${app.base}/admin`);
    for (const label of ['Overview', 'Clients', 'Users', 'API scopes', 'Signing keys', 'Webhooks', 'Audit log', 'Ada Admin', 'Sign out']) expect(page.body).toContain(label);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
  });

  it('gives a user without a console role the 403 page, without data', async () => {
    const { page } = await signIn(NOBODY);
    expect(page.status).toBe(403);
    expect(page.body).toContain('role="alert"');
    expect(page.body).not.toContain('Clients');
  });

  it('leads a user without a second factor to enrol one first, then opens the console', async () => {
    const browser = new Browser();
    let page = await browser.follow(await browser.get(`${app.base}/admin`), app.base);
    page = await submit(browser, page, { username: NOVICE.username, password: NOVICE.password }, app.base);
    expect(page.body).toContain('name="otp"');
    expect(page.body.toLowerCase()).toContain('authenticator');
    // Set up, it opens the console.
    const secret = (/<p class="secret"><code>([^<]+)<\/code>/.exec(page.body)?.[1] ?? '').replace(/\s/g, '');
    page = await submit(browser, page, { otp: await totp(secret, serverSeconds()) }, app.base);
    expect(page.body).toContain('>Continue<');
    page = await submit(browser, page, {}, app.base);
    expect(page.url).toBe(`${app.base}/admin`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h1>Overview</h1>');
  });

  it('sends the webhooks role to its one page, and refuses it every other', async () => {
    const { browser } = await signIn(HOOKS);
    const overview = await browser.get(`${app.base}/admin`);
    expect(overview.status).toBe(303);
    expect(overview.location).toBe(`${app.base}/admin/webhooks`);
    for (const path of ['/clients', '/users', '/clients/new']) {
      const refused = await browser.get(`${app.base}/admin${path}`);
      expect(refused.status).toBe(403);
      expect(refused.body).not.toContain('<table');
    }
    expect(await browser.post(`${app.base}/admin/clients`, { client_id: 'by-hooks' }).then((r) => r.status)).toBe(403);
  });
});

describe('the console session', () => {
  it('ends after 15 minutes without a request, and the next GET signs in again', async () => {
    const { browser } = await signIn(ADMIN);
    offsetMs += 14 * 60_000;
    expect((await browser.get(`${app.base}/admin`)).status).toBe(200);
    offsetMs += 14 * 60_000;
    expect((await browser.get(`${app.base}/admin`)).status).toBe(200);
    offsetMs += 16 * 60_000;
    const after = await browser.get(`${app.base}/admin`);
    expect(after.status).toBe(303);
    expect(after.location).toContain('/connect/authorize?');
  });

  it('ends 8 hours after sign-in, however busy', async () => {
    const { browser } = await signIn(AUDITOR);
    for (let hour = 0; hour < 8 * 6; hour++) {
      offsetMs += 10 * 60_000;
      const page = await browser.get(`${app.base}/admin`);
      if (page.status !== 200) {
        expect(hour).toBeGreaterThanOrEqual(8 * 6 - 1);
        return;
      }
    }
    offsetMs += 10 * 60_000;
    expect((await browser.get(`${app.base}/admin`)).status).toBe(303);
  });

  it('ends at the next request once the user is locked', async () => {
    const { browser } = await signIn(LOCKABLE);
    expect((await browser.get(`${app.base}/admin`)).status).toBe(200);
    await app.sql("UPDATE users SET locked = true WHERE username = 'lockable'");
    // The users cache hears of the change within a second.
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      status = (await browser.get(`${app.base}/admin`)).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(303);
  });

  it('ends at the next request once the user loses their console role', async () => {
    const { browser } = await signIn(AUDITOR);
    await app.sql("UPDATE users SET roles = '{gardener}' WHERE username = 'audrey'");
    let status = 200;
    for (let i = 0; i < 50 && status === 200; i++) {
      status = (await browser.get(`${app.base}/admin`)).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(303);
    await app.sql("UPDATE users SET roles = '{idp-auditor}' WHERE username = 'audrey'");
  });

  it('ends at the next request once the browser session it came from signed out', async () => {
    const { browser } = await signIn(ADMIN);
    const confirm = await browser.get(`${app.base}/connect/logout`);
    const form = readForm(confirm.body, confirm.url);
    const out = await browser.post(form.action, form.fields);
    expect(out.status).toBeLessThan(400);
    expect(out.body + (out.location ?? '')).not.toContain('Sign out</button>');
    const after = await browser.get(`${app.base}/admin`);
    expect(after.status).toBe(303);
    expect(after.location).toContain('/connect/authorize?');
  });

  it('ends with "Sign out" (a form with its CSRF token), and not without the token', async () => {
    const { browser, page } = await signIn(ADMIN);
    const refused = await browser.post(`${app.base}/admin/sign-out`, {});
    expect(refused.status).toBe(403);
    expect((await browser.get(`${app.base}/admin`)).status).toBe(200);
    const out = await browser.post(`${app.base}/admin/sign-out`, { csrf_token: csrfOf(page) });
    expect(out.status).toBe(200);
    expect(out.body).toContain('Signed out of the console');
    expect((await browser.get(`${app.base}/admin`)).status).toBe(303);
  });
});

describe('the console overview', () => {
  it('shows the database, the store, mail, the current signing key and its next rotation, the webhook endpoints failing or disabled, and the locked accounts', async () => {
    await app.sql("UPDATE users SET locked = true WHERE username = 'nobody'");
    await app.sql(`INSERT INTO webhook_endpoints (id, url, event_types, enabled, secret_sealed, disabled_reason, failing_since) VALUES
      ('ep_failing', 'https://failing.example/hook', '{admin_change}', true, 'sealed', NULL, now() - interval '2 hours'),
      ('ep_gone', 'https://gone.example/hook', '{admin_change}', false, 'sealed', 'gone', NULL),
      ('ep_fine', 'https://fine.example/hook', '{admin_change}', true, 'sealed', NULL, NULL)`);
    const { page } = await signIn(AUDITOR);
    const text = page.body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    expect(text).toMatch(/Database Up/);
    expect(text).toMatch(/Short-lived store Up/);
    expect(text).toMatch(/Mail Up/);
    const kid = (await app.sql<{ kid: string }>("SELECT kid FROM signing_keys WHERE state = 'current'"))[0]?.kid ?? 'none';
    expect(text).toContain(`Current key ${kid}`);
    expect(text).toMatch(/Next rotation \d{4}-\d\d-\d\dT/);
    expect(page.body).toMatch(/href="[^"]*\/admin\/users\/[^"]+">nobody</);
    expect(text).toContain('Sign-ins of the last 24 hours');
    expect(text).toMatch(/https:\/\/failing\.example\/hook : failing since \d{4}-/);
    expect(text).toMatch(/https:\/\/gone\.example\/hook : disabled: the endpoint answered 410 Gone/);
    expect(text).not.toContain('fine.example');
  });
});
