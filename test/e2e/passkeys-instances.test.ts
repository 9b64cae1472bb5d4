/**
 * A passkey registered through one instance signs in through another: two `idp serve` processes
 * on one PostgreSQL database and one Redis, behind one load balancer (one IDP_BASE_URL, one
 * relying party id). The second-factor page, with its challenge, is shown by one instance and
 * its answer is verified by the other.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeRequest, chromiumAvailable, launchChromium, startRelyingParty, type RelyingParty } from '../helpers/chromium.ts';
import { seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { REDIS_URL, createMigratedTestDatabase, postgresAvailable, redisAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import { HANG_LIMIT_MS } from '../helpers/waits.ts';
import { Balancer } from './operations-support.ts';
import { PASSWORD, addVirtualAuthenticator, atCallback, idTokenClaims, signInWithPassword, usePasskey } from './passkey-support.ts';

const ready = chromiumAvailable('the passkeys-across-instances suite') && postgresAvailable && redisAvailable;
const CLIENT_ID = 'passkey-instances-app';
const USERNAME = 'ines';

describe.runIf(ready)('a passkey across instances (PostgreSQL and Redis)', () => {
  let database: TestDatabase;
  let balancer: Balancer;
  let rp: RelyingParty;
  const servers: RunningServer[] = [];
  let browser: Browser;
  let page: Page;
  let base = '';

  beforeAll(async () => {
    database = await createMigratedTestDatabase();
    balancer = await Balancer.start();
    rp = await startRelyingParty();
    base = `http://localhost:${balancer.port}`;
    const env = { DATABASE_URL: database.url, REDIS_URL, IDP_SECRET: 'd4'.repeat(32), IDP_BASE_URL: base, LOG_LEVEL: 'info' };
    await seedWith({
      api_scopes: [],
      clients: [{
        client_id: CLIENT_ID, display_name: 'Passkey App', enabled: true, grant_types: ['authorization_code'], scopes: ['openid'],
        require_consent: false, redirect_uris: [rp.redirectUri], post_logout_redirect_uris: [], cors_origins: [],
      }],
      users: [{ username: USERNAME, password: PASSWORD, must_enrol_mfa: true }],
    }, env);
    for (let i = 0; i < 2; i++) servers.push(await startServer(env));
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-US' });
    context.setDefaultTimeout(HANG_LIMIT_MS);
    page = await context.newPage();
    await addVirtualAuthenticator(page);
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all(servers.map((s) => s.stop()));
    await rp?.close();
    await balancer?.close();
    await database?.drop();
  });

  it('registers through A, and signs in with a page from A answered through B', async () => {
    const [a, b] = servers as [RunningServer, RunningServer];
    balancer.use(a);
    const first = authorizeRequest({ ...a, url: base }, rp, CLIENT_ID, 'openid');
    await signInWithPassword(page, first.url, USERNAME);
    const enrolled = await usePasskey(page, 'Set up a passkey');
    expect(new URL(enrolled.url).pathname).toMatch(/\/passkey-enrol$/);
    // The first second factor comes with recovery codes, shown once.
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.waitForURL(atCallback(rp));
    const rows = await runSql<{ kind: string; credential_id: string; sign_count: string }>(database.url, "SELECT kind, credential_id, sign_count FROM user_factors WHERE kind = 'passkey'");
    expect(rows).toEqual([{ kind: 'passkey', credential_id: expect.stringMatching(/^[\w-]{16,}$/), sign_count: expect.any(String) }]);
    expect(await runSql<{ n: number }>(database.url, "SELECT count(*)::int AS n FROM user_factors WHERE kind = 'recovery_code'")).toEqual([{ n: 10 }]);

    const second = authorizeRequest({ ...a, url: base }, rp, CLIENT_ID, 'openid');
    await signInWithPassword(page, `${second.url}&prompt=login`, USERNAME);
    await page.getByRole('button', { name: 'Use a passkey', exact: true }).waitFor();
    // The challenge was made by A; B verifies it, with the passkey A stored.
    balancer.use(b);
    const servedByB = balancer.served.get(b.port) ?? 0;
    await usePasskey(page, 'Use a passkey');
    await page.waitForURL(atCallback(rp));
    expect(balancer.served.get(b.port) ?? 0).toBeGreaterThan(servedByB);
    expect(b.output()).toMatch(/"event":"sign_in","source_address":"[^"]+","client_id":"passkey-instances-app","result":"success","username":"ines"/);
    expect(b.output()).toMatch(/"route":"\/interaction\/:id\/passkey","status":30\d/);
    const claims = await idTokenClaims(base, CLIENT_ID, page.url(), second.verifier, rp.redirectUri);
    expect(claims.amr).toEqual(['pwd', 'mfa']);
    expect(claims.acr).toBe('urn:svc:ac:mfa');
    const [used] = await runSql<{ last_used_at: Date | null }>(database.url, "SELECT last_used_at FROM user_factors WHERE kind = 'passkey'");
    expect(used?.last_used_at).toBeInstanceOf(Date);
  });
});
