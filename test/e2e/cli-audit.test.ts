/**
 * The command line's audit events, read as an operator collects them: each `idp` command that
 * changes something writes one JSON audit line on stderr (`admin_change` with `actor: cli`, or
 * `key_rotated`/`key_retired`), its answer stays alone on stdout (under --json, one document), a
 * refused command writes none, and no line carries a secret or a password.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdp, tempDir, type RunResult } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'd'.repeat(64);
const PASSWORD = 'a long audited password 4711';
const SEED_SECRET = 'a-seeded-client-secret-0123456789abcdef';

/** The one audit line of a successful command: every stderr line must be an audit line, and there is one. */
function auditLine(result: RunResult): Record<string, unknown> {
  expect(result.code, result.stderr).toBe(0);
  const lines = result.stderr.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ audit: true, level: 30 });
  return lines[0] as Record<string, unknown>;
}

describe.runIf(postgresAvailable)('idp audit lines', () => {
  let db: TestDatabase;
  const dataDir = tempDir();
  const idp = (args: string[], stdin?: string) =>
    runIdp(args, { IDP_SECRET, IDP_DATA_DIR: dataDir.path, DATABASE_URL: db.url, LOG_LEVEL: 'info' }, stdin);
  let sub = '';

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    expect((await idp(['migrate'])).code).toBe(0);
  });
  afterAll(async () => {
    await db?.drop();
    dataDir.remove();
  });

  it('logs a seed as one admin_change naming the file and the fields it wrote, never a password or secret', async () => {
    const path = join(dataDir.path, 'seed.json');
    writeFileSync(path, JSON.stringify({
      api_scopes: ['orders.read'],
      clients: [{ client_id: 'service', client_secret: SEED_SECRET, grant_types: ['client_credentials'] }],
      users: [{ username: 'alice', password: PASSWORD }],
    }));
    const seeded = await idp(['seed', path]);
    expect(seeded.stdout).toMatch(/^clients: 1 created/m);
    expect(auditLine(seeded)).toMatchObject({
      event: 'admin_change', actor: 'cli', action: 'seed', resource: 'seed_file', resource_id: path, fields: ['api_scopes', 'clients.client_secret', 'clients.grant_types', 'users.password'], msg: 'admin_change',
    });
    expect(seeded.stderr).not.toContain(PASSWORD);
    expect(seeded.stderr).not.toContain(SEED_SECRET);
  });

  it('logs idp users lock as an admin_change of the user\'s locked field, beside the one --json document', async () => {
    const locked = await idp(['users', 'lock', 'alice', '--json']);
    const answer = JSON.parse(locked.stdout) as { sub: string; locked: boolean };
    expect(answer).toMatchObject({ username: 'alice', locked: true });
    sub = answer.sub;
    expect(auditLine(locked)).toMatchObject({ event: 'admin_change', actor: 'cli', action: 'update', resource: 'user', resource_id: sub, fields: ['locked'] });
  });

  it('logs nothing for a refused command: its one line is the refusal', async () => {
    const refused = await idp(['users', 'lock', 'nobody']);
    expect({ code: refused.code, stdout: refused.stdout, stderr: refused.stderr }).toStrictEqual({ code: 1, stdout: '', stderr: 'no user named nobody\n' });
  });

  it('logs idp keys rotate and idp keys retire as key_rotated and key_retired by the cli', async () => {
    const first = await idp(['keys', 'rotate']);
    const firstKid = /^new current signing key: (\S+)$/m.exec(first.stdout)?.[1];
    expect(auditLine(first)).toMatchObject({ event: 'key_rotated', kid: firstKid, actor: 'cli', msg: 'key_rotated' });
    const second = await idp(['keys', 'rotate', '--json']);
    const secondKid = (JSON.parse(second.stdout) as { kid: string }).kid;
    expect(secondKid).not.toBe(firstKid);
    expect(auditLine(second)).toMatchObject({ event: 'key_rotated', kid: secondKid, actor: 'cli' });
    expect(auditLine(await idp(['keys', 'retire', firstKid ?? '', '--force']))).toMatchObject({ event: 'key_retired', kid: firstKid, actor: 'cli' });
  });

  it('logs every other change of clients, users, scopes and sealed values once, with field names only', async () => {
    const cases: Array<[string[], Record<string, unknown>]> = [
      [['users', 'unlock', 'alice'], { action: 'update', resource: 'user', resource_id: sub, fields: ['locked'] }],
      [['users', 'require-password-change', 'alice'], { action: 'update', resource: 'user', resource_id: sub, fields: ['must_change_password'] }],
      [['users', 'require-mfa', 'alice'], { action: 'update', resource: 'user', resource_id: sub, fields: ['must_enrol_mfa'] }],
      [['users', 'add', '--username', 'bob', '--password', PASSWORD], { action: 'create', resource: 'user', fields: expect.arrayContaining(['username', 'password']) }],
      [['users', 'remove', 'alice'], { action: 'delete', resource: 'user', resource_id: sub, fields: [] }],
      [['clients', 'add', '--id', 'web', '--redirect-uri', 'https://shop.example/cb'], { action: 'create', resource: 'client', resource_id: 'web', fields: expect.arrayContaining(['client_id', 'client_secret', 'redirect_uris']) }],
      [['clients', 'disable', 'web'], { action: 'update', resource: 'client', resource_id: 'web', fields: ['enabled'] }],
      [['clients', 'enable', 'web'], { action: 'update', resource: 'client', resource_id: 'web', fields: ['enabled'] }],
      [['clients', 'rotate-secret', 'web'], { action: 'update', resource: 'client', resource_id: 'web', fields: ['client_secret'] }],
      [['clients', 'remove', 'web'], { action: 'delete', resource: 'client', resource_id: 'web', fields: [] }],
      [['scopes', 'add', 'orders.write'], { action: 'create', resource: 'api_scope', resource_id: 'orders.write', fields: [] }],
      [['scopes', 'remove', 'orders.write'], { action: 'delete', resource: 'api_scope', resource_id: 'orders.write', fields: [] }],
      [['secrets', 'reseal'], { action: 'reseal', resource: 'sealed_values', resource_id: 'IDP_SECRET' }],
    ];
    for (const [args, expected] of cases) {
      const result = await idp(args);
      expect(auditLine(result), args.join(' ')).toMatchObject({ event: 'admin_change', actor: 'cli', ...expected });
      // A generated secret or a password is on stdout at most, never in the audit line.
      expect(result.stderr, args.join(' ')).not.toContain(PASSWORD);
      for (const word of result.stdout.split(/\s+/).filter((w) => /^[A-Za-z0-9_-]{43}$/.test(w))) expect(result.stderr).not.toContain(word);
    }
  });
});
