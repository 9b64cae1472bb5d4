/**
 * Rotating a client secret without downtime, as an operator and a client see it on a running
 * server: `idp clients rotate-secret ID --keep-old-for 1d` keeps the old secret working beside
 * the new one, `idp clients show` says until when (never a hash), an SQL edit of the window
 * takes effect on every instance, and afterwards the old secret is refused with the audit
 * reason that says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashClientSecret } from '../../src/tokens/opaque.ts';
import { outputWhen, runIdp, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'f'.repeat(64);
const FIRST_SECRET = 'first-client-secret-0123456789abcdefghijk';
const DAY = 86_400_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(postgresAvailable)('idp clients rotate-secret --keep-old-for', () => {
  let db: TestDatabase;
  let server: RunningServer;
  /** Another instance on the same database: it learns of every change through the same NOTIFY. */
  let other: RunningServer;
  const idp = (args: string[]) => runIdp(args, { DATABASE_URL: db.url, IDP_SECRET });
  const tokenStatus = async (secret: string, on = server) => {
    const answer = await fetch(`${on.url}/connect/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`svc:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    await answer.body?.cancel();
    return answer.status;
  };
  /** The status once it is `expected` (a change reaches the server through NOTIFY within a second), or as it is then. */
  const statusBecomes = async (secret: string, expected: number, on = server) => {
    const deadline = Date.now() + 5000;
    while ((await tokenStatus(secret, on)) !== expected && Date.now() < deadline) await sleep(50);
    return tokenStatus(secret, on);
  };
  const failureReasons = () =>
    server.output().split('\n').filter((l) => l.includes('"client_authentication_failed"')).map((l) => (JSON.parse(l) as { reason: string }).reason);

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    expect((await idp(['migrate'])).code).toBe(0);
    await runSql(db.url, `INSERT INTO clients (client_id, secret_hash, grant_types) VALUES ('svc', $1, '{client_credentials}')`, [hashClientSecret(FIRST_SECRET)]);
    await runSql(db.url, `INSERT INTO clients (client_id, redirect_uris) VALUES ('spa', '{https://spa.example/cb}')`);
    [server, other] = await Promise.all([
      startServer({ DATABASE_URL: db.url, IDP_SECRET, LOG_LEVEL: 'info' }),
      startServer({ DATABASE_URL: db.url, IDP_SECRET }),
    ]);
  });
  afterAll(async () => {
    await other?.stop();
    await server?.stop();
    await db?.drop();
  });

  it('accepts the old secret beside the new one until the window ends, then refuses it as expired_secret', async () => {
    const rotated = await idp(['clients', 'rotate-secret', 'svc', '--keep-old-for', '1d', '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const answer = JSON.parse(rotated.stdout) as { client_secret: string; previous_secret_expires_at: string };
    expect(Math.abs(Date.parse(answer.previous_secret_expires_at) - (Date.now() + DAY))).toBeLessThan(60_000);
    expect(await statusBecomes(answer.client_secret, 200)).toBe(200);
    expect(await tokenStatus(FIRST_SECRET)).toBe(200);
    expect(await statusBecomes(answer.client_secret, 200, other)).toBe(200);
    expect(await tokenStatus(FIRST_SECRET, other)).toBe(200);

    const shown = await idp(['clients', 'show', 'svc', '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ has_secret: true, secret_expires_at: null, previous_secret_expires_at: answer.previous_secret_expires_at });
    expect((await idp(['clients', 'show', 'svc'])).stdout).toContain(`previous_secret`);
    expect(shown.stdout + (await idp(['clients', 'show', 'svc'])).stdout).not.toContain('sha256$');

    await runSql(db.url, `UPDATE clients SET previous_secret_expires_at = now() - interval '1 second' WHERE client_id = 'svc'`);
    expect(await statusBecomes(FIRST_SECRET, 401)).toBe(401);
    expect(await tokenStatus(answer.client_secret)).toBe(200);
    expect(await statusBecomes(FIRST_SECRET, 401, other)).toBe(401);
    expect(await tokenStatus(answer.client_secret, other)).toBe(200);
    await outputWhen(server, () => failureReasons().includes('expired_secret'));
    const seen = failureReasons().length;
    expect(await tokenStatus('a-wrong-secret-0123456789abcdefghijklmn')).toBe(401);
    await outputWhen(server, () => failureReasons().length > seen);
    expect(failureReasons().slice(seen)).toStrictEqual(['bad_secret']);
  });

  it('without --keep-old-for ends the old secret at once, and drops one kept before', async () => {
    const kept = JSON.parse((await idp(['clients', 'rotate-secret', 'svc', '--keep-old-for', '3600', '--json'])).stdout) as { client_secret: string };
    const fresh = await idp(['clients', 'rotate-secret', 'svc']);
    expect(fresh.stdout).toMatch(/^client svc has a new secret \(the previous one no longer works; this one does not expire\), shown only this once:\n\S{43}\n$/);
    const secret = fresh.stdout.trim().split('\n')[1] ?? '';
    expect(await statusBecomes(secret, 200)).toBe(200);
    expect(await tokenStatus(kept.client_secret)).toBe(401);
    expect(JSON.parse((await idp(['clients', 'show', 'svc', '--json'])).stdout)).toMatchObject({ previous_secret_expires_at: null });
  });

  it('ends a previous secret kept by a rotation when a seed file sets a new secret (a secret replaced by hand may have leaked)', async () => {
    const seeded = 'seeded-client-secret-0123456789abcdefghijk';
    await seedWith({ clients: [{ client_id: 'svc', client_secret: seeded }] }, { DATABASE_URL: db.url, IDP_SECRET });
    const rotated = JSON.parse((await idp(['clients', 'rotate-secret', 'svc', '--keep-old-for', '1d', '--json'])).stdout) as { client_secret: string };
    expect(await statusBecomes(rotated.client_secret, 200)).toBe(200);
    expect(await tokenStatus(seeded)).toBe(200);
    const replacement = 'replacement-secret-0123456789abcdefghijklm';
    await seedWith({ clients: [{ client_id: 'svc', client_secret: replacement }] }, { DATABASE_URL: db.url, IDP_SECRET });
    expect(await statusBecomes(replacement, 200)).toBe(200);
    expect(await statusBecomes(seeded, 401)).toBe(401);
    expect(await tokenStatus(rotated.client_secret)).toBe(401);
    expect(JSON.parse((await idp(['clients', 'show', 'svc', '--json'])).stdout)).toMatchObject({ previous_secret_expires_at: null });
  });

  it('takes a previous secret set with SQL, and refuses one on a public client or without its expiry', async () => {
    await runSql(db.url, `UPDATE clients SET previous_secret_hash = $1, previous_secret_expires_at = now() + interval '1 hour' WHERE client_id = 'svc'`, [hashClientSecret(FIRST_SECRET)]);
    expect(await statusBecomes(FIRST_SECRET, 200)).toBe(200);
    await expect(runSql(db.url, `UPDATE clients SET previous_secret_hash = $1, previous_secret_expires_at = now() + interval '1 hour' WHERE client_id = 'spa'`, [hashClientSecret(FIRST_SECRET)]))
      .rejects.toThrow(/clients_previous_secret_confidential/);
    await expect(runSql(db.url, `UPDATE clients SET previous_secret_expires_at = NULL WHERE client_id = 'svc'`)).rejects.toThrow(/clients_previous_secret_complete/);
    await expect(runSql(db.url, `UPDATE clients SET secret_hash = NULL, grant_types = '{authorization_code}' WHERE client_id = 'svc'`)).rejects.toThrow(/clients_previous_secret_confidential/);
  });

  it('refuses a window it cannot keep in one line: too long, or not a duration', async () => {
    const tooLong = await idp(['clients', 'rotate-secret', 'svc', '--keep-old-for', '31d']);
    expect({ code: tooLong.code, stdout: tooLong.stdout, stderr: tooLong.stderr }).toStrictEqual({
      code: 1, stdout: '', stderr: 'the old secret can be kept for at most 30 days (2592000 s)\n',
    });
    const notDuration = await idp(['clients', 'rotate-secret', 'svc', '--keep-old-for', 'soon']);
    expect(notDuration.code).toBe(2);
    expect(notDuration.stderr).toMatch(/^--keep-old-for must be a duration such as 1d, 12h, 30m, 3600s or seconds, not "soon" \(usage: idp clients rotate-secret ID \[--keep-old-for DURATION\]\)\n$/);
    expect((await idp(['clients', 'rotate-secret', 'spa', '--keep-old-for', '1d'])).code).toBe(1);
  });
});
