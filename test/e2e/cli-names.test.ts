/**
 * What `idp` does with hostile and doubled names, driven as an administrator would: spawned
 * commands against a real PostgreSQL database. Control characters (a terminal escape, a bidi
 * override) are refused where names come in and printed escaped where they were stored by other
 * means; a username is stored as sign-in finds it, so another spelling of it is the same account.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp, tempDir, type RunResult } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'e'.repeat(64);
const PASSWORD = 'violet orchestra lantern 2031';
const ESC = '\u001b';
/** Any C0 or C1 control (but a line break), DEL, or bidi override left raw in what reaches a terminal. */
const RAW_CONTROL = /(?!\n)[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

function expectRefused(result: RunResult, text: RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toStrictEqual({ code: 1, stdout: '' });
  expect(result.stderr).not.toMatch(RAW_CONTROL);
  expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(text);
}

describe.skipIf(!postgresAvailable)('idp and the names it stores and shows (PostgreSQL)', () => {
  let db: TestDatabase;
  const dir = tempDir();
  const idp = (args: string[]) => runIdp(args, { IDP_SECRET, IDP_DATA_DIR: dir.path, DATABASE_URL: db.url });
  const usernames = async () => (await runSql<{ username: string }>(db.url, `SELECT username FROM users ORDER BY username`)).map((r) => r.username);
  const seed = async (content: object) => {
    const file = join(dir.path, 'seed.json');
    writeFileSync(file, JSON.stringify(content));
    return idp(['seed', file]);
  };

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    expect((await idp(['migrate'])).code).toBe(0);
  });
  afterAll(async () => {
    await db?.drop();
    dir.remove();
  });

  it('refuses control characters and bidi overrides in a username or profile field given to idp users add, escaped in its one line', async () => {
    expectRefused(await idp(['users', 'add', '--username', `eve${ESC}[2J`, '--password', PASSWORD]), /^user "eve\\x1b\[2J": username must not contain control characters/);
    expectRefused(await idp(['users', 'add', '--username', 'eve', '--given-name', 'Eve\u202Egnp.exe', '--password', PASSWORD]), /^user "eve": given_name must not contain control characters/);
    expectRefused(await idp(['users', 'add', '--username', 'eve', '--phone', `+1${ESC}]0;owned\u0007`, '--password', PASSWORD]), /phone_number must not contain/);
    expect(await usernames()).toStrictEqual([]);
  });

  it('refuses them in a seed file, naming each field, and writes nothing', async () => {
    const result = await seed({ users: [{ username: 'mallory', password: PASSWORD, name: `Mallory${ESC}[31m`, email: `m${ESC}@example.com`, roles: ['ok', 'a\u2066b'] }] });
    expect(result.code).toBe(1);
    expect(result.stderr).not.toMatch(RAW_CONTROL);
    expect(result.stderr.trimEnd().split('\n')).toStrictEqual([
      'users[0].name: must not contain control characters (such as ESC or a line break) or bidirectional overrides',
      'users[0].email: must not contain control characters (such as ESC or a line break) or bidirectional overrides',
      'users[0].roles[1]: must not contain control characters (such as ESC or a line break) or bidirectional overrides',
      `${join(dir.path, 'seed.json')} refused: 3 wrong field(s); nothing was written`,
    ]);
    expect(await usernames()).toStrictEqual([]);
  });

  it('prints a stored value that holds control characters escaped in show and list, and as JSON that decodes to it', async () => {
    const name = `Trudy${ESC}]0;pwned${ESC}\\ \u009b31m \u202Eevil`;
    await runSql(db.url, `INSERT INTO users (id, subject, username, name, email) VALUES ('t1', 't1', 'trudy', $1, $2)`, [name, `t${ESC}[8m@example.com`]);
    const shown = await idp(['users', 'show', 'trudy']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).not.toMatch(RAW_CONTROL);
    const fields = shown.stdout.split('\n').map((line) => line.split(/: +/));
    expect(fields).toContainEqual(['name', 'Trudy\\x1b]0;pwned\\x1b\\ \\x9b31m \\u202eevil']);
    expect(fields).toContainEqual(['email', 't\\x1b[8m@example.com (not verified)']);
    const listed = await idp(['users', 'list']);
    expect(listed.stdout).not.toMatch(RAW_CONTROL);
    expect(listed.stdout).toContain('t\\x1b[8m@example.com');
    for (const args of [['users', 'show', 'trudy', '--json'], ['users', 'list', '--json']]) {
      const result = await idp(args);
      expect(result.stdout).not.toMatch(RAW_CONTROL);
      expect(JSON.stringify(JSON.parse(result.stdout))).toContain(JSON.stringify(name).slice(1, -1));
    }
  });

  it('stores the username as sign-in finds it, and refuses another spelling of it as the same account', async () => {
    const added = await idp(['users', 'add', '--username', '  Alice ', '--password', PASSWORD, '--json']);
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ username: 'alice' });
    expectRefused(await idp(['users', 'add', '--username', 'ALICE ', '--password', 'another long password 1']), /^user ALICE {2}already exists$/);
    expect((await idp(['users', 'show', ' Alice'])).stdout).toMatch(/^username: +alice$/m);
    expect(await usernames()).toStrictEqual(['alice', 'trudy']);
  });

  it('makes one account of two spellings in a seed file, and of a seeded spelling of an existing account', async () => {
    const doubled = await seed({ users: [{ username: 'dave', password: PASSWORD }, { username: ' DAVE', password: PASSWORD }] });
    expect(doubled.code).toBe(1);
    expect(doubled.stderr).toContain('users[1].username: duplicate of users[0].username');
    const again = await seed({ users: [{ username: 'ALICE ', password: PASSWORD, email: 'alice@example.com' }] });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('users: 0 created, 1 updated, 0 unchanged');
    expect(await usernames()).toStrictEqual(['alice', 'trudy']);
  });

  it('has the database refuse a non-canonical or second spelling of a local username written with SQL', async () => {
    await expect(runSql(db.url, `INSERT INTO users (id, subject, username) VALUES ('x1', 'x1', 'alice ')`)).rejects.toThrow(/users_local_username_canonical/);
    await expect(runSql(db.url, `INSERT INTO users (id, subject, username) VALUES ('x2', 'x2', 'Bob')`)).rejects.toThrow(/users_local_username_canonical/);
    await expect(runSql(db.url, `INSERT INTO users (id, subject, username) VALUES ('x3', 'x3', 'alice')`)).rejects.toThrow(/users_source_username_unique/);
    expect(await usernames()).toStrictEqual(['alice', 'trudy']);
  });
});
