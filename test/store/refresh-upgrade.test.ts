/**
 * Upgrading a PostgreSQL database whose refresh tokens were issued before generations
 * (migration 2026-11-22-0003): the tokens clients hold keep working as generation 0 of their
 * family, a rotated-out one is still theft, and revoking the family still reaches the access
 * tokens issued before the upgrade.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken, randomToken } from '../../src/tokens/opaque.ts';
import { START, openHarness, outcome, type Harness } from '../unit/grants/grant-harness.ts';
import { createTestDatabase, migrateBefore, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const UPGRADE = '2026-11-22-0003-refresh-generations';
const GRACE = 10;
const FAMILY = randomUUID();
const USER = randomUUID();
const LEGACY_JTI = randomUUID();
const CURRENT = randomToken();
const ROTATED = randomToken();
const hour = (n: number) => new Date(START + n * 3600_000);

/** The database as the release before generations left it: one family, a rotated token and its successor. */
async function databaseBeforeUpgrade(url: string): Promise<void> {
  await migrateBefore(url, UPGRADE);
  await runSql(url, `INSERT INTO clients (client_id, grant_types, scopes, redirect_uris) VALUES ('web', '{authorization_code,refresh_token}', '{openid,offline_access}', '{https://rp.example/cb}')`);
  await runSql(url, `INSERT INTO users (id, subject, username) VALUES ($1, $1, 'legacy')`, [USER]);
  await runSql(url, `
    INSERT INTO refresh_token_families (id, client_id, user_id, scopes, auth_time, amr, created_at, expires_at)
    VALUES ($1, 'web', $2, '{openid,offline_access}', $3, '{pwd}', $3, $4)`, [FAMILY, USER, hour(-2), hour(100)]);
  await runSql(url, `
    INSERT INTO refresh_tokens (token_hash, family_id, created_at, expires_at, rotated_at, successor_hash, access_jti, access_expires_at)
    VALUES ($1, $3, $4, $5, $5, $2, 'expired-jti', $5), ($2, $3, $5, $6, NULL, NULL, $7, $8)`,
  [hashToken(ROTATED), hashToken(CURRENT), FAMILY, hour(-2), hour(-1), hour(20), LEGACY_JTI, hour(1)]);
}

describe.skipIf(!postgresAvailable)('refresh tokens issued before generations, after the upgrade', () => {
  let database: TestDatabase;
  let h: Harness;
  beforeAll(async () => {
    database = await createTestDatabase();
    await databaseBeforeUpgrade(database.url);
    h = await openHarness({ databaseUrl: database.url, graceSeconds: GRACE });
  });
  afterAll(async () => {
    await h?.close();
    await database?.drop();
  });

  it('gives the family a salt and the expiries of its current token and latest access token', async () => {
    const [row] = await runSql<{ generation: number; salt: number; token_expires_at: Date; access_expires_at: Date }>(database.url,
      'SELECT generation, length(token_salt) AS salt, token_expires_at, access_expires_at FROM refresh_token_families WHERE id = $1', [FAMILY]);
    expect(row).toEqual({ generation: 0, salt: 32, token_expires_at: hour(20), access_expires_at: hour(1) });
  });

  it('rotates the token a client holds into a token of generation 1, and gives a retry the same answer', async () => {
    const rotated = await h.refresh(CURRENT);
    expect(rotated.refresh_token).toMatch(/^[A-Za-z0-9_-]{71}$/);
    expect((await h.refreshState(rotated.refresh_token ?? ''))).toMatchObject({ current: true, family: { id: FAMILY, generation: 1 } });
    h.advance(GRACE - 1);
    expect(JSON.stringify(await h.refresh(CURRENT))).toBe(JSON.stringify(rotated));
    expect(await outcome(h.refresh(rotated.refresh_token ?? ''))).toBe('ok');
  });

  it('treats the token rotated out before the upgrade as theft: the family and every access token of it revoked', async () => {
    const latest = await h.refreshState(CURRENT);
    expect(latest?.family.revokedAt).toBeNull();
    expect(await outcome(h.refresh(ROTATED))).toBe('invalid_grant');
    expect((await h.refreshState(CURRENT))?.family.revokedAt).not.toBeNull();
    expect(await h.deps.revocations.isRevoked(LEGACY_JTI)).toBe(true);
    expect(h.audit.filter((e) => e.event === 'refresh_token_reuse_detected')).toHaveLength(1);
  });
});
