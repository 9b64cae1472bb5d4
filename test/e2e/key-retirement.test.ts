/**
 * Retiring a signing key, as an operator does it against a running server: `idp keys retire`
 * refuses while tokens the key signed may still be valid (saying until when), `--force` retires
 * it anyway and the token it signed seconds before is inactive at once, and `idp keys rotate`
 * says that caches may hold the key set for its max-age.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashClientSecret } from '../../src/tokens/opaque.ts';
import { runIdp, startServer, type RunningServer } from '../helpers/process.ts';
import { createMigratedTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';

const IDP_SECRET = 'e'.repeat(64);
const CLIENT_SECRET = 'key-retirement-secret-0123456789abcdefgh';
const BASIC = `Basic ${Buffer.from(`svc:${CLIENT_SECRET}`).toString('base64')}`;
const ISO = '(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z)';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function kidOf(jwt: string): string {
  return (JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid;
}

describe.runIf(postgresAvailable)('idp keys retire against a server that just issued a token', () => {
  let db: TestDatabase;
  let server: RunningServer;
  const idp = (args: string[]) => runIdp(args, { DATABASE_URL: db.url, IDP_SECRET });

  const post = (path: string, body: string) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: BASIC, 'content-type': 'application/x-www-form-urlencoded' }, body });
  const accessToken = async () => ((await (await post('/connect/token', 'grant_type=client_credentials')).json()) as { access_token: string }).access_token;
  const active = async (token: string) => ((await (await post('/connect/introspect', `token=${token}`)).json()) as { active: boolean }).active;
  /** Polls until `check` holds (a change reaches the server through NOTIFY within a second). */
  const eventually = async (check: () => Promise<boolean>) => {
    const deadline = Date.now() + 5000;
    while (!(await check()) && Date.now() < deadline) await sleep(50);
    return check();
  };

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    expect((await idp(['migrate'])).code).toBe(0);
    await runSql(db.url, `INSERT INTO clients (client_id, secret_hash, grant_types, access_token_lifetime) VALUES ('svc', $1, '{client_credentials}', 600)`, [hashClientSecret(CLIENT_SECRET)]);
    server = await startServer({ DATABASE_URL: db.url, IDP_SECRET });
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  it('refuses to retire the key of a token issued seconds ago, says until when, and --force makes that token inactive at once', async () => {
    const token = await accessToken();
    const oldKid = kidOf(token);
    const rotated = await idp(['keys', 'rotate']);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/^new current signing key: \S+\nit signs from now on, but relying parties may hold the previous key set for up to 300 s \(the JWKS Cache-Control max-age\)/);
    expect(await eventually(async () => kidOf(await accessToken()) !== oldKid)).toBe(true);

    const refused = await idp(['keys', 'retire', oldKid]);
    expect({ code: refused.code, stdout: refused.stdout }).toStrictEqual({ code: 1, stdout: '' });
    const match = new RegExp(`^signing key ${oldKid.replace(/[-]/g, '\\-')} may still verify tokens until ${ISO} \\(it signed until ${ISO}, tokens live up to 3600 s, plus 300 s for clock skew\\): retire it after that, or use --force, which makes every token it signed invalid at once \\(relying parties must sign their users in again\\)\\n$`).exec(refused.stderr);
    expect(match, refused.stderr).not.toBeNull();
    const [until, signedUntil] = [Date.parse(match?.[1] ?? ''), Date.parse(match?.[2] ?? '')];
    expect(until - signedUntil).toBe(3900_000);
    expect(Math.abs(signedUntil - Date.now())).toBeLessThan(60_000);
    expect(await active(token)).toBe(true);

    const forced = await idp(['keys', 'retire', oldKid, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toBe(`signing key ${oldKid} retired by force: every token it signed (until ${match?.[2]}) is invalid now instead of at ${match?.[1]}; relying parties must sign their users in again\n`);
    expect(await eventually(async () => !(await active(token)))).toBe(true);
  });

  it('retires without --force a key that never signed, or whose tokens have all expired', async () => {
    const before = (JSON.parse((await idp(['keys', 'list', '--json'])).stdout) as { keys: Array<{ kid: string; state: string }> }).keys;
    const previous = before.find((k) => k.state === 'current')?.kid ?? '';
    expect((await idp(['keys', 'rotate'])).code).toBe(0);
    // The successor has signed for two hours: the previous key's tokens (an hour at most, plus five minutes) are gone.
    await runSql(db.url, `UPDATE signing_keys SET activated_at = now() - interval '2 hours' WHERE state = 'current'`);
    await runSql(db.url, `UPDATE signing_keys SET activated_at = now() - interval '3 hours' WHERE kid = $1`, [previous]);
    const retired = await idp(['keys', 'retire', previous]);
    expect({ code: retired.code, stdout: retired.stdout }).toStrictEqual({ code: 0, stdout: `signing key ${previous} retired: it is no longer published\n` });

    const nextKid = 'never-signed-key';
    await runSql(db.url, `INSERT INTO signing_keys (kid, state, public_jwk, private_jwk_sealed) SELECT $1, 'next', public_jwk, private_jwk_sealed FROM signing_keys WHERE state = 'current'`, [nextKid]);
    expect((await idp(['keys', 'retire', nextKid])).code).toBe(0);
  });
});
