/**
 * Upgrading a database that already holds a redirect URI the stricter rule refuses (migration
 * 2026-11-24-0001): `idp migrate` stops, names each client and URI, and changes nothing; once an
 * administrator has fixed them, the upgrade applies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp } from '../helpers/process.ts';
import { createTestDatabase, migrateBefore, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const UPGRADE = '2026-11-24-0001-redirect-uri-schemes';
const IDP_SECRET = 'd'.repeat(64);

describe.skipIf(!postgresAvailable)('a database with redirect URIs the new rule refuses, on upgrade', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    await migrateBefore(database.url, UPGRADE);
    await runSql(database.url, `INSERT INTO clients (client_id, redirect_uris, post_logout_redirect_uris) VALUES
      ('good', '{https://app.example/cb,http://127.0.0.1:8080/cb,com.example.app:/cb}', '{}'),
      ('evil', '{javascript:alert(1)}', '{http://app.example/bye}')`);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('is refused by idp migrate with one line naming each client and URI, changing nothing', async () => {
    const result = await runIdp(['migrate'], { DATABASE_URL: database.url, IDP_SECRET });
    expect(result.code).not.toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toContain(UPGRADE);
    expect(lines[0]).toContain('evil "javascript:alert(1)"');
    expect(lines[0]).toContain('evil "http://app.example/bye"');
    expect(lines[0]).not.toContain('good');
    const applied = await runSql(database.url, 'SELECT name FROM kysely_migration WHERE name = $1', [UPGRADE]);
    expect(applied).toHaveLength(0);
    // The old rule still stands: the database was left as it was.
    await runSql(database.url, `UPDATE clients SET redirect_uris = '{myapp://cb}' WHERE client_id = 'good'`);
  });

  it('applies once the administrator fixed the URIs, and then the database refuses them', async () => {
    await runSql(database.url, `UPDATE clients SET redirect_uris = '{https://evil.example/cb}', post_logout_redirect_uris = '{}' WHERE client_id = 'evil'`);
    await runSql(database.url, `UPDATE clients SET redirect_uris = '{com.example.app:/cb}' WHERE client_id = 'good'`);
    const result = await runIdp(['migrate'], { DATABASE_URL: database.url, IDP_SECRET });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`applied ${UPGRADE}`);
    await expect(runSql(database.url, `UPDATE clients SET redirect_uris = '{javascript:alert(1)}' WHERE client_id = 'good'`))
      .rejects.toThrow(/clients_redirect_uris_format/);
  });
});
