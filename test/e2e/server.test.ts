/**
 * The running service, driven from outside: discovery and JWKS over HTTP, key rotation seen in
 * the JWKS, an SQL edit reaching a running server within a second, and two servers started at
 * once on an empty database ending with one signing key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashClientSecret } from '../../src/tokens/opaque.ts';
import { createMigratedTestDatabase, createTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import { runIdp, startServer, type RunningServer } from '../helpers/process.ts';

const SECRET = 'b'.repeat(64);

const EXPECTED_DISCOVERY = (base: string) => ({
  issuer: `${base}/`,
  authorization_endpoint: `${base}/connect/authorize`,
  token_endpoint: `${base}/connect/token`,
  userinfo_endpoint: `${base}/connect/userinfo`,
  introspection_endpoint: `${base}/connect/introspect`,
  revocation_endpoint: `${base}/connect/revoke`,
  end_session_endpoint: `${base}/connect/logout`,
  jwks_uri: `${base}/.well-known/jwks`,
  grant_types_supported: ['authorization_code', 'client_credentials', 'refresh_token'],
  response_types_supported: ['code'],
  response_modes_supported: ['form_post', 'fragment', 'query'],
  scopes_supported: ['openid', 'offline_access', 'profile', 'email', 'phone', 'roles', 'admin_api', 'admin_api_readonly', 'admin_console_webhooks'],
  claims_supported: ['aud', 'exp', 'iat', 'iss', 'sub', 'name', 'given_name', 'family_name', 'preferred_username', 'email', 'email_verified', 'phone_number', 'phone_number_verified', 'updated_at', 'auth_time', 'amr', 'acr', 'role', 'idp'],
  id_token_signing_alg_values_supported: ['RS256'],
  code_challenge_methods_supported: ['plain', 'S256'],
  subject_types_supported: ['public'],
  token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
  introspection_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
  revocation_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
  claims_parameter_supported: true,
  request_parameter_supported: false,
  request_uri_parameter_supported: false,
  authorization_response_iss_parameter_supported: true,
  acr_values_supported: ['urn:svc:ac:pwd', 'urn:svc:ac:mfa', 'urn:svc:ac:external'],
});

const CLIENT_SECRET = 'service-secret-0123456789abcdefghijklmnop';

async function insertServiceClient(db: TestDatabase, clientId: string): Promise<void> {
  await runSql(db.url, `INSERT INTO api_scopes (name) VALUES ('orders.read') ON CONFLICT DO NOTHING`);
  await runSql(
    db.url,
    `INSERT INTO clients (client_id, display_name, secret_hash, grant_types, scopes)
     VALUES ($1, 'Order service', $2, '{client_credentials}', '{orders.read}')`,
    [clientId, hashClientSecret(CLIENT_SECRET)],
  );
}

function clientCredentials(server: RunningServer, clientId: string): Promise<Response> {
  return fetch(`${server.url}/connect/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${CLIENT_SECRET}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials&scope=orders.read',
  });
}

function kidOf(jwt: string): string {
  return (JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString()) as { kid: string }).kid;
}

async function jwks(server: RunningServer): Promise<{ keys: Array<Record<string, string>> }> {
  return (await (await fetch(`${server.url}/.well-known/jwks`)).json()) as { keys: Array<Record<string, string>> };
}

describe.runIf(postgresAvailable)('a server on PostgreSQL', () => {
  let db: TestDatabase;
  let server: RunningServer;

  beforeAll(async () => {
    db = await createMigratedTestDatabase();
    server = await startServer({ DATABASE_URL: db.url, IDP_SECRET: SECRET });
  });
  afterAll(async () => {
    await server?.stop();
    await db?.drop();
  });

  it('serves exactly the discovery document of the interface, to any origin', async () => {
    const res = await fetch(`${server.url}/.well-known/openid-configuration`, { headers: { origin: 'https://any.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect(await res.json()).toStrictEqual(EXPECTED_DISCOVERY(server.url));
  });

  it('publishes only the public members of the signing key', async () => {
    const res = await fetch(`${server.url}/.well-known/jwks`);
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const set = (await res.json()) as { keys: Array<Record<string, string>> };
    expect(set.keys).toHaveLength(1);
    expect(Object.keys(set.keys[0] ?? {}).sort()).toStrictEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(set.keys[0]).toMatchObject({ use: 'sig', kty: 'RSA', alg: 'RS256', e: 'AQAB' });
    // RSA-2048: a 256-byte modulus.
    expect(Buffer.from(set.keys[0]?.n ?? '', 'base64url')).toHaveLength(256);
  });

  it('answers health and readiness', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ database: 'ok', store: 'ok' });
  });

  it('keeps the private key encrypted at rest', async () => {
    const rows = await runSql<{ private_jwk_sealed: string }>(db.url, 'SELECT private_jwk_sealed FROM signing_keys');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.private_jwk_sealed).toMatch(/^v1\./);
    expect(rows[0]?.private_jwk_sealed).not.toContain('"d"');
  });

  it('sees an SQL edit of a client within one second', async () => {
    await insertServiceClient(db, 'orders-service');
    // The client row was inserted after start: the cache must not keep an earlier "unknown".
    const first = await clientCredentials(server, 'orders-service');
    expect(first.status).toBe(200);

    await runSql(db.url, `UPDATE clients SET enabled = false WHERE client_id = 'orders-service'`);
    const editedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - editedAt < 3000) {
      status = (await clientCredentials(server, 'orders-service')).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(401);
    expect(Date.now() - editedAt).toBeLessThan(1000);

    await runSql(db.url, `UPDATE clients SET enabled = true WHERE client_id = 'orders-service'`);
    const reenabledAt = Date.now();
    while ((await clientCredentials(server, 'orders-service')).status !== 200) {
      expect(Date.now() - reenabledAt).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('signs with the new key after `idp keys rotate` and keeps the old one published until retired', async () => {
    const before = await jwks(server);
    const oldKid = before.keys[0]?.kid ?? '';
    const rotated = await runIdp(['keys', 'rotate', '--json'], { DATABASE_URL: db.url, IDP_SECRET: SECRET });
    expect(rotated.code).toBe(0);

    const deadline = Date.now() + 2000;
    let after = await jwks(server);
    while (after.keys.length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      after = await jwks(server);
    }
    expect(after.keys.map((k) => k.kid)).toContain(oldKid);
    expect(after.keys).toHaveLength(2);
    const newKid = after.keys.find((k) => k.kid !== oldKid)?.kid;
    expect(rotated.stdout).toContain(newKid);

    const token = (await (await clientCredentials(server, 'orders-service')).json()) as { access_token: string };
    expect(kidOf(token.access_token)).toBe(newKid);

    const retired = await runIdp(['keys', 'retire', oldKid, '--force'], { DATABASE_URL: db.url, IDP_SECRET: SECRET });
    expect(retired.code).toBe(0);
    const retiredAt = Date.now();
    let final = await jwks(server);
    while (final.keys.length !== 1 && Date.now() - retiredAt < 2000) {
      await new Promise((r) => setTimeout(r, 50));
      final = await jwks(server);
    }
    expect(final.keys.map((k) => k.kid)).toStrictEqual([newKid]);
  });
});

describe.runIf(postgresAvailable)('two servers started at once on an empty database', () => {
  let db: TestDatabase;
  const servers: RunningServer[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await db?.drop();
  });

  it('end with one signing key, published by both', async () => {
    servers.push(...(await Promise.all([1, 2].map(() => startServer({ DATABASE_URL: db.url, IDP_SECRET: SECRET })))));
    const rows = await runSql<{ kid: string; state: string }>(db.url, 'SELECT kid, state FROM signing_keys');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.state).toBe('current');
    const [a, b] = await Promise.all(servers.map(jwks));
    expect(a?.keys.map((k) => k.kid)).toStrictEqual([rows[0]?.kid]);
    expect(b).toStrictEqual(a);
  });
});
