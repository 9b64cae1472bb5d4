/**
 * Upgrading a PostgreSQL database whose TOTP secrets were a column of `users` (migration
 * 2026-11-27-0002): each sealed secret becomes the user's 'totp' factor, sealed as it was, so
 * the user is still asked for a code after the password and signs in with the app they had.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/sources/passwords.ts';
import { deriveKey, seal } from '../../src/tokens/secret-box.ts';
import {
  AddressedBrowser, IDP_SECRET, awayFromStepEnd, codeOf, decodeJwt, expectKind, nowSeconds, redeem, seedFor, signIn, startAuthorization, submit, totp,
} from '../e2e/account-support.ts';
import { runIdp, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createTestDatabase, migrateBefore, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const UPGRADE = '2026-11-27-0002-second-factors';
const SECRET = 'JBSWY3DPEHPK3PXP';
const ENROLLED = { id: randomUUID(), username: 'ann-enrolled', password: 'ann has a long password 9' };
const PLAIN = { id: randomUUID(), username: 'ben-plain', password: 'ben has a long password 9' };

/** The database as the release before the factors table left it: one user with an app, one without. */
async function databaseBeforeUpgrade(url: string): Promise<void> {
  await migrateBefore(url, UPGRADE);
  const sealed = seal(deriveKey(Buffer.from(IDP_SECRET, 'hex'), 'totp-secrets'), SECRET, `totp:${ENROLLED.id}`);
  for (const [user, secret] of [[ENROLLED, sealed], [PLAIN, null]] as const) {
    await runSql(url, 'INSERT INTO users (id, subject, username, password_hash, totp_secret_sealed) VALUES ($1, $1, $2, $3, $4)',
      [user.id, user.username, await hashPassword(user.password), secret]);
  }
}

describe.skipIf(!postgresAvailable)('TOTP secrets kept in users, after the upgrade to second factors', () => {
  let database: TestDatabase;
  let server: RunningServer;
  beforeAll(async () => {
    database = await createTestDatabase();
    await databaseBeforeUpgrade(database.url);
    const env = { DATABASE_URL: database.url, IDP_SECRET };
    server = await startServer(env);
    await seedWith(seedFor([]), env);
  });
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('moves each sealed secret, as it was sealed, into a totp factor of its user, and drops the column', async () => {
    const factors = await runSql<{ user_id: string; kind: string; sealed: string }>(database.url, 'SELECT user_id, kind, secret_sealed AS sealed FROM user_factors');
    expect(factors).toEqual([{ user_id: ENROLLED.id, kind: 'totp', sealed: expect.stringMatching(/^v1\./) }]);
    const columns = await runSql(database.url, "SELECT 1 FROM information_schema.columns WHERE table_name = 'users' AND column_name = 'totp_secret_sealed'");
    expect(columns).toEqual([]);
    const shown = await runIdp(['users', 'show', ENROLLED.username, '--json'], { DATABASE_URL: database.url, IDP_SECRET });
    expect(JSON.parse(shown.stdout)).toMatchObject({ username: ENROLLED.username, mfa_enrolled: true });
  });

  it('asks the enrolled user for a code after the password, and signs them in with their app (amr pwd, mfa)', async () => {
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, server.url);
    const otpPage = await signIn(browser, started.page, server.url, ENROLLED.username, ENROLLED.password);
    expectKind(otpPage, 'otp');
    await awayFromStepEnd();
    const done = await submit(browser, otpPage, server.url, { otp: await totp(SECRET, nowSeconds()) });
    expectKind(done, 'redirect');
    const answer = await redeem(server.url, codeOf(done, started.state), started.verifier);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(decodeJwt(answer.body.id_token).payload.amr).toEqual(['pwd', 'mfa']);
    const [used] = await runSql<{ last_used_at: Date | null }>(database.url, 'SELECT last_used_at FROM user_factors WHERE user_id = $1', [ENROLLED.id]);
    expect(used?.last_used_at).toBeInstanceOf(Date);
  });

  it('signs in the user without a secret with the password alone', async () => {
    const browser = new AddressedBrowser();
    const started = await startAuthorization(browser, server.url);
    const done = await signIn(browser, started.page, server.url, PLAIN.username, PLAIN.password);
    expectKind(done, 'redirect');
  });
});
