/**
 * Upgrading a database whose local usernames are not in the form sign-in looks them up by
 * (migration 2026-11-27-0001): names that would collide stop `idp migrate`, named, changing
 * nothing; once an administrator has removed the dead account, the names are rewritten and the
 * database refuses a non-canonical one from then on. Names of other sources are left as they are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp } from '../helpers/process.ts';
import { createTestDatabase, migrateBefore, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const UPGRADE = '2026-11-27-0001-canonical-usernames';
const IDP_SECRET = 'f'.repeat(64);

describe.skipIf(!postgresAvailable)('a database with usernames in other spellings, on upgrade', () => {
  let database: TestDatabase;
  const usernames = async () => (await runSql<{ id: string; username: string }>(database.url, 'SELECT id, username FROM users ORDER BY id')).map((r) => `${r.id}=${r.username}`);
  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateBefore(database.url, UPGRADE);
    await runSql(database.url, `INSERT INTO users (id, source, subject, username) VALUES
      ('u1', 'local', 'u1', 'alice'), ('u2', 'local', 'u2', 'ALICE '), ('u3', 'local', 'u3', ' Bob'),
      ('u4', 'oidc', 'Sub-AbC', 'Sub-AbC'), ('u5', 'ldap', 'Carol', 'Carol')`);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('is refused by idp migrate with one line naming the accounts that would share a name, changing nothing', async () => {
    const result = await runIdp(['migrate'], { DATABASE_URL: database.url, IDP_SECRET });
    expect(result.code).not.toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toContain(UPGRADE);
    expect(lines[0]).toContain('"ALICE " (id u2) and "alice" (id u1)');
    expect(lines[0]).not.toContain('Bob');
    expect(await runSql(database.url, 'SELECT name FROM kysely_migration WHERE name = $1', [UPGRADE])).toHaveLength(0);
    expect(await usernames()).toStrictEqual(['u1=alice', 'u2=ALICE ', 'u3= Bob', 'u4=Sub-AbC', 'u5=Carol']);
  });

  it('applies once the administrator removed the dead account: local names rewritten, others kept, new ones checked', async () => {
    await runSql(database.url, `DELETE FROM users WHERE id = 'u2'`);
    const result = await runIdp(['migrate'], { DATABASE_URL: database.url, IDP_SECRET });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`applied ${UPGRADE}`);
    expect(await usernames()).toStrictEqual(['u1=alice', 'u3=bob', 'u4=Sub-AbC', 'u5=Carol']);
    await expect(runSql(database.url, `INSERT INTO users (id, subject, username) VALUES ('u6', 'u6', 'ALICE ')`)).rejects.toThrow(/users_local_username_canonical/);
    const shown = await runIdp(['users', 'show', 'BOB', '--json'], { DATABASE_URL: database.url, IDP_SECRET });
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: 'u3', username: 'bob' });
  });
});
