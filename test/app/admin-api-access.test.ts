/**
 * Who may call the administration API, in process: only access tokens of this service's client
 * credentials grant with an administration scope, checked at every call (forged, expired,
 * revoked, a client disabled or stripped of the scope with SQL: 401), the scope each call needs
 * (403), and where the API is served (IDP_ADMIN_API).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpFetch } from '../helpers/http-transport.ts';
import { freePort } from '../helpers/process.ts';
import { basic } from '../helpers/oauth.ts';
import { waitUntil } from '../helpers/waits.ts';
import {
  ADMIN_SECRET, HOOKS_SECRET, READER_SECRET, SERVICE_SECRET, call, isProblem, startAdminApp, tokenFor, type Answer, type AdminSetup,
} from '../e2e/admin-api-support.ts';

const INVALID_TOKEN = 'Bearer error="invalid_token"';

function expectInvalidToken(answer: Answer): void {
  expect(isProblem(answer, 401), JSON.stringify(answer.body)).toBe(true);
  expect(answer.headers.get('www-authenticate')).toBe(INVALID_TOKEN);
}

describe('administration API: who may call it', () => {
  let s: AdminSetup;
  beforeAll(async () => {
    s = await startAdminApp();
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('answers a token of admin_api, and refuses no token, a malformed header, a forged or expired token', async () => {
    const token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
    expect((await call(`${s.api}/clients`, 'GET', { token })).status).toBe(200);
    expectInvalidToken(await call(`${s.api}/clients`, 'GET'));
    expectInvalidToken(await call(`${s.api}/clients`, 'GET', { headers: { authorization: basic('automation', ADMIN_SECRET) } }));
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, exp: Number(claims.exp) + 3600 })).toString('base64url');
    expectInvalidToken(await call(`${s.api}/clients`, 'GET', { token: `${header}.${forged}.${signature}` }));
    expectInvalidToken(await call(`${s.api}/clients`, 'GET', { token: `${header}.${payload}.${signature.slice(0, -4)}AAAA` }));
    const brief = await tokenFor(s.base, 'brief', SERVICE_SECRET, 'admin_api');
    await waitUntil('the one-second token expires', async () => (await call(`${s.api}/clients`, 'GET', { token: brief })).status === 401);
    expectInvalidToken(await call(`${s.api}/clients`, 'GET', { token: brief }));
  });

  it('refuses a token revoked at the revocation endpoint', async () => {
    const token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
    expect((await call(`${s.api}/users`, 'GET', { token })).status).toBe(200);
    const revoked = await httpFetch(`${s.base}/connect/revoke`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('automation', ADMIN_SECRET) },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(revoked.status).toBe(200);
    expectInvalidToken(await call(`${s.api}/users`, 'GET', { token }));
  });

  it('refuses, within a second, the tokens of a client disabled with SQL or whose scopes column no longer lists the scope', async () => {
    const token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
    await s.sql("UPDATE clients SET enabled = false WHERE client_id = 'automation'");
    await waitUntil('the disabled client is refused', async () => (await call(`${s.api}/clients`, 'GET', { token })).status === 401, { limitMs: 1000 });
    await s.sql("UPDATE clients SET enabled = true WHERE client_id = 'automation'");
    await waitUntil('the enabled client is let in again', async () => (await call(`${s.api}/clients`, 'GET', { token })).status === 200, { limitMs: 1000 });
    await s.sql("UPDATE clients SET scopes = '{orders.read}' WHERE client_id = 'automation'");
    await waitUntil('the scope removed from its row is refused', async () => (await call(`${s.api}/clients`, 'GET', { token })).status === 401, { limitMs: 1000 });
    expectInvalidToken(await call(`${s.api}/clients`, 'GET', { token }));
    await s.sql("UPDATE clients SET scopes = '{admin_api}' WHERE client_id = 'automation'");
  });

  it('gives admin_api_readonly reading only, admin_console_webhooks none of these resources, other scopes nothing (403 with the scope)', async () => {
    const reader = await tokenFor(s.base, 'reader', READER_SECRET, 'admin_api_readonly');
    expect((await call(`${s.api}/clients`, 'GET', { token: reader })).status).toBe(200);
    const head = await call(`${s.api}/clients`, 'HEAD', { token: reader });
    expect([head.status, head.body]).toEqual([200, undefined]);
    const write = await call(`${s.api}/api-scopes`, 'POST', { token: reader, body: { name: 'never.made' } });
    expect(isProblem(write, 403)).toBe(true);
    expect(write.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="admin_api"');
    const hooks = await tokenFor(s.base, 'hooks', HOOKS_SECRET, 'admin_console_webhooks');
    const read = await call(`${s.api}/users`, 'GET', { token: hooks });
    expect(isProblem(read, 403)).toBe(true);
    expect(read.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="admin_api_readonly"');
    const service = await tokenFor(s.base, 'service', SERVICE_SECRET, 'orders.read');
    expect(isProblem(await call(`${s.api}/keys`, 'GET', { token: service }), 403)).toBe(true);
    expect((await s.sql("SELECT 1 FROM api_scopes WHERE name = 'never.made'")).length).toBe(0);
  });

  it('gives an administration scope only to a client that lists it, and only by the client credentials grant', async () => {
    const refused = await httpFetch(`${s.base}/connect/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic('reader', READER_SECRET) },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'admin_api' }).toString(),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_scope');
  });

  it('serves the OpenAPI document without a token', async () => {
    const doc = await call(`${s.api}/openapi.json`, 'GET');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.components.securitySchemes.oauth2.flows.clientCredentials.scopes).sort()).toEqual(['admin_api', 'admin_api_readonly', 'admin_console_webhooks']);
    expect(doc.body.components.securitySchemes.oauth2.flows.clientCredentials.tokenUrl).toBe(`${s.base}/connect/token`);
  });
});

describe('IDP_ADMIN_API', () => {
  it('off: 404 for every path of the API', async () => {
    const s = await startAdminApp({ IDP_ADMIN_API: 'off' });
    try {
      const token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
      for (const path of ['/clients', '/openapi.json', '/users']) expect((await call(`${s.api}${path}`, 'GET', { token })).status).toBe(404);
    } finally {
      await s.stop();
    }
  });

  it('management: served on IDP_MANAGEMENT_PORT only', async () => {
    const port = await freePort();
    const s = await startAdminApp({ IDP_ADMIN_API: 'management', IDP_MANAGEMENT_PORT: String(port) });
    try {
      const token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
      expect((await call(`${s.api}/clients`, 'GET', { token })).status).toBe(404);
      const there = await call(`http://127.0.0.1:${port}/admin/v1/clients`, 'GET', { token });
      expect(there.status, JSON.stringify(there.body)).toBe(200);
      expectInvalidToken(await call(`http://127.0.0.1:${port}/admin/v1/clients`, 'GET'));
    } finally {
      await s.stop();
    }
  });
});
