/**
 * What evicts a user's tokens, from outside: an administrator locking, removing or flagging the
 * user (`idp users`, or SQL on the users table), a password changed (the password page, or
 * `idp seed` with a new password). Each time every refresh token family of the user and every
 * access token issued to them is revoked: the refresh grant refuses them, introspection answers
 * inactive and userinfo refuses, and clearing the flag (unlock, the new password) brings none of
 * them back. Then the durability of revocations: a Redis restarted empty and a new instance
 * started afterwards still refuse what was revoked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostForwarder } from '../helpers/host-forwarder.ts';
import { seedWith, startServer } from '../helpers/process.ts';
import { postgresAvailable, runSql } from '../helpers/services.ts';
import { startOwnRedis, type OwnRedis } from './operations-support.ts';
import {
  ALICE, BOB, Browser, WEB, WEB_REDIRECT, expectActive, expectInactive, expectOAuthError, expectUserinfoAccepted,
  expectUserinfoRefused, idpOk, pkce, propagation, readForm, refresh, revoke, seedFor, signInTokens, startCluster, token, tokensWith,
  type Cluster, type Tokens, type User,
} from './token-lifecycle-support.ts';

const PAT: User = { username: 'pat', password: 'a first long password of theirs 1' };
const LOU: User = { username: 'lou', password: 'a first long password of theirs 2' };
const MAX: User = { username: 'max', password: 'a first long password of theirs 3' };
const REM: User = { username: 'rem', password: 'a first long password of theirs 4' };
const SQL_USER: User = { username: 'quinn', password: 'a first long password of theirs 5' };
const SEEDY: User = { username: 'seedy', password: 'a first long password of theirs 6' };
const USERS = [PAT, LOU, MAX, REM, SQL_USER, SEEDY];

/** Everything a user holds at the web client: a refresh token family, and an access token issued on its own. */
interface Held {
  withRefresh: Tokens;
  accessOnly: Tokens;
}

describe.runIf(postgresAvailable)('what evicts a user\'s tokens', () => {
  let cluster: Cluster;
  let base: string;

  beforeAll(async () => {
    cluster = await startCluster({ seed: seedFor(USERS) });
    base = cluster.base;
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  async function hold(who: User): Promise<Held> {
    const withRefresh = await signInTokens(cluster, who, WEB);
    const accessOnly = await signInTokens(cluster, who, WEB, 'openid profile');
    expect(accessOnly.refresh_token).toBeUndefined();
    await expectActive(base, WEB, withRefresh.access_token);
    await expectActive(base, WEB, accessOnly.access_token);
    return { withRefresh, accessOnly };
  }

  async function expectEvicted(held: Held): Promise<void> {
    for (const tokens of [held.withRefresh, held.accessOnly]) {
      await expectInactive(base, WEB, tokens.access_token);
      await expectUserinfoRefused(base, tokens.access_token);
    }
    await expectInactive(base, WEB, held.withRefresh.refresh_token);
    expectOAuthError(await refresh(base, WEB, held.withRefresh.refresh_token), 400, 'invalid_grant');
  }

  it('require-password-change revokes everything; the token from before does not come back once the password is changed', async () => {
    const held = await hold(PAT);
    await idpOk(cluster, ['users', 'require-password-change', PAT.username]);
    await propagation();
    await expectEvicted(held);

    // The user signs in, is asked for a new password, and gets new tokens.
    const browser = new Browser();
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({
      client_id: 'web', response_type: 'code', redirect_uri: WEB_REDIRECT, scope: 'openid offline_access',
      code_challenge: challenge, code_challenge_method: 'S256', state: 's1',
    });
    let page = await browser.follow(await browser.get(`${base}/connect/authorize?${query.toString()}`), base);
    let form = readForm(page.body, page.url);
    page = await browser.follow(await browser.post(form.action, { ...form.fields, username: PAT.username, password: PAT.password }), base);
    expect(page.body, 'the password page').toContain('name="new_password"');
    form = readForm(page.body, page.url);
    const fresh = 'violet orchestra lantern 2031';
    page = await browser.follow(await browser.post(form.action, { ...form.fields, new_password: fresh, confirm_password: fresh }), base);
    expect(page.location?.startsWith(`${WEB_REDIRECT}?`), /role="alert"[^>]*>([\s\S]*?)<\/div>/.exec(page.body)?.[1]).toBe(true);
    const code = new URL(page.location ?? '').searchParams.get('code') ?? '';
    const redeemed = await token(base, WEB, { grant_type: 'authorization_code', code, redirect_uri: WEB_REDIRECT, code_verifier: verifier });
    expect(redeemed.status, redeemed.text).toBe(200);
    await expectActive(base, WEB, String(redeemed.body.access_token));
    expect((await refresh(base, WEB, String(redeemed.body.refresh_token))).status).toBe(200);

    // What a thief took before the change stays dead.
    await expectEvicted(held);
  });

  it('lock revokes everything, and unlock brings none of it back', async () => {
    const held = await hold(LOU);
    await idpOk(cluster, ['users', 'lock', LOU.username]);
    await propagation();
    await expectEvicted(held);
    await idpOk(cluster, ['users', 'unlock', LOU.username]);
    await propagation();
    await expectEvicted(held);
    // The user, unlocked, gets tokens again.
    await expectUserinfoAccepted(base, (await tokensWith(new Browser(), base, LOU, WEB)).access_token);
  });

  it('require-mfa revokes everything', async () => {
    const held = await hold(MAX);
    await idpOk(cluster, ['users', 'require-mfa', MAX.username]);
    await propagation();
    await expectEvicted(held);
  });

  it('remove: introspection answers inactive for the removed user\'s tokens, as userinfo refuses them', async () => {
    const held = await hold(REM);
    await idpOk(cluster, ['users', 'remove', REM.username]);
    await propagation();
    await expectEvicted(held);
  });

  it('an administrator locking the user with SQL revokes everything too', async () => {
    const held = await hold(SQL_USER);
    await runSql(cluster.db.url, 'UPDATE users SET locked = true WHERE username = $1', [SQL_USER.username]);
    await runSql(cluster.db.url, 'UPDATE users SET locked = false WHERE username = $1', [SQL_USER.username]);
    await propagation();
    await expectEvicted(held);
  });

  it('a new password given by `idp seed` revokes everything; the same password again revokes nothing', async () => {
    const held = await hold(SEEDY);
    const renewed = { ...SEEDY, password: 'a second long password of theirs 7' };
    await seedWith(seedFor(USERS.map((u) => (u === SEEDY ? renewed : u))), cluster.env);
    await propagation();
    await expectEvicted(held);

    const after = await tokensWith(new Browser(), base, renewed, WEB);
    await seedWith(seedFor(USERS.map((u) => (u === SEEDY ? renewed : u))), cluster.env);
    await propagation();
    await expectActive(base, WEB, after.access_token);
    expect((await refresh(base, WEB, after.refresh_token)).status).toBe(200);
  });
});

describe.runIf(postgresAvailable)('revocations outlive Redis', () => {
  let redis: OwnRedis;
  let cluster: Cluster;

  beforeAll(async () => {
    redis = await startOwnRedis();
    cluster = await startCluster({ env: { REDIS_URL: redis.url } });
  });
  afterAll(async () => {
    await cluster?.stop();
    await redis?.stop();
  });

  it('a Redis restarted empty and an instance started afterwards still refuse a revoked access token and a revoked family\'s', async () => {
    const base = cluster.base;
    const revokedAccess = await tokensWith(new Browser(), base, ALICE, WEB);
    const revokedFamily = await tokensWith(new Browser(), base, BOB, WEB);
    const kept = await tokensWith(new Browser(), base, ALICE, WEB);
    expect((await revoke(base, WEB, revokedAccess.access_token)).status).toBe(200);
    expect((await revoke(base, WEB, revokedFamily.refresh_token)).status).toBe(200);
    await expectInactive(base, WEB, revokedAccess.access_token);
    await expectInactive(base, WEB, revokedFamily.access_token);

    // Redis loses everything; a new instance starts on the same database and the new Redis.
    await redis.stop();
    await redis.start();
    const server = await startServer(cluster.env);
    const forwarder = await startHostForwarder(server.port, new URL(base).host);
    try {
      for (const at of [forwarder.url, base]) {
        await expectInactive(at, WEB, revokedAccess.access_token);
        await expectUserinfoRefused(at, revokedAccess.access_token);
        await expectInactive(at, WEB, revokedFamily.access_token);
        await expectUserinfoRefused(at, revokedFamily.access_token);
        await expectActive(at, WEB, kept.access_token);
      }
    } finally {
      await forwarder.close();
      await server.stop();
    }
  });
});
