/**
 * Upgrading a database whose local usernames hold look-alike or invisible characters (migration
 * 2026-11-29-0021): names that would then collide stop `idp migrate`, named, changing nothing;
 * once an administrator has removed the dead account, the names are rewritten to NFKC without
 * invisible characters and the database refuses such a name from then on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp } from '../helpers/process.ts';
import { createTestDatabase, migrateBefore, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const UPGRADE = '2026-11-29-0021-nfkc-usernames';
const IDP_SECRET = 'f'.repeat(64);

describe.skipIf(!postgresAvailable)('a database with look-alike usernames, on upgrade', () => {
  let database: TestDatabase;
  const usernames = async () => (await runSql<{ id: string; username: string }>(database.url, 'SELECT id, username FROM users ORDER BY id')).map((r) => `${r.id}=${r.username}`);
  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateBefore(database.url, UPGRADE);
    await runSql(database.url, `INSERT INTO users (id, source, subject, username) VALUES
      ('u1', 'local', 'u1', 'alice'), ('u2', 'local', 'u2', 'alice\u200b'), ('u3', 'local', 'u3', '\uff42ob'),
      ('u4', 'ldap', 'c\u200barol', 'c\u200barol')`);
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
    expect(lines[0]).toContain('"alice" (id u1) and "alice\u200b" (id u2)');
    expect(await runSql(database.url, 'SELECT name FROM kysely_migration WHERE name = $1', [UPGRADE])).toHaveLength(0);
    expect(await usernames()).toStrictEqual(['u1=alice', 'u2=alice\u200b', 'u3=\uff42ob', 'u4=c\u200barol']);
  });

  it('applies once the administrator removed the dead account: local names rewritten, others kept, new ones checked', async () => {
    await runSql(database.url, `DELETE FROM users WHERE id = 'u2'`);
    const result = await runIdp(['migrate'], { DATABASE_URL: database.url, IDP_SECRET });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`applied ${UPGRADE}`);
    expect(await usernames()).toStrictEqual(['u1=alice', 'u3=bob', 'u4=c\u200barol']);
    await expect(runSql(database.url, `INSERT INTO users (id, subject, username) VALUES ('u6', 'u6', 'dave\u2060')`)).rejects.toThrow(/users_local_username_visible/);
    const shown = await runIdp(['users', 'show', '\uff22OB', '--json'], { DATABASE_URL: database.url, IDP_SECRET });
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: 'u3', username: 'bob' });
  });
});
