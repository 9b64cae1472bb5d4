/**
 * The administration API's clients and API scopes, in process: every status of the contract,
 * ETags that any write changes (SQL included) with If-Match on every change, racing changes,
 * Idempotency-Key, and bad input refused whole with each wrong field named.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, adminChanges, call, isProblem, startAdminApp, tokenFor, type AdminSetup } from '../e2e/admin-api-support.ts';

describe('administration API: clients and API scopes', () => {
  let s: AdminSetup;
  let token: string;
  const url = (path: string) => `${s.api}${path}`;
  const count = async (table: string) => Number((await s.sql(`SELECT count(*)::int AS n FROM ${table}`))[0]?.n);

  beforeAll(async () => {
    s = await startAdminApp({ LOG_LEVEL: 'info' });
    token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('creates a client (201, Location, ETag, its secret this once), reads it, refuses a second one by its id (409)', async () => {
    const created = await call(url('/clients'), 'POST', { token, body: { client_id: 'ci-prod', display_name: 'CI', grant_types: ['client_credentials'], scopes: ['orders.read'] } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe('/admin/v1/clients/ci-prod');
    expect(created.headers.get('etag')).toMatch(/^"\d+"$/);
    const secret = created.body.client_secret as string;
    expect(secret.length).toBeGreaterThanOrEqual(43);
    expect(await tokenFor(s.base, 'ci-prod', secret, 'orders.read')).toMatch(/\./);
    const read = await call(url('/clients/ci-prod'), 'GET', { token });
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe(created.headers.get('etag'));
    expect(read.body).toMatchObject({ client_id: 'ci-prod', display_name: 'CI', client_type: 'confidential', has_secret: true });
    expect(JSON.stringify(read.body)).not.toContain(secret);
    expect(Object.keys(read.body)).not.toContain('client_secret');
    expect(JSON.stringify(read.body)).not.toMatch(/sha256\$/);
    expect(isProblem(await call(url('/clients/ci-prod'), 'POST', { token, body: {} }), 404)).toBe(true);
    expect(isProblem(await call(url('/clients'), 'POST', { token, body: { client_id: 'ci-prod' } }), 409)).toBe(true);
    expect(isProblem(await call(url('/clients/nobody'), 'GET', { token }), 404)).toBe(true);
    expect(isProblem(await call(url('/clients/%00'), 'GET', { token }), 404)).toBe(true);
    expect(adminChanges(s.logs())).toContainEqual(expect.objectContaining({ actor: 'api', client_id: 'automation', action: 'create', resource: 'client', resource_id: 'ci-prod' }));
    expect(s.logs()).not.toContain(secret);
  });

  it('changes a client with If-Match only: 428 without, 412 when stale (an SQL edit too), 415 for plain JSON, then 200 and a new ETag', async () => {
    const read = await call(url('/clients/web'), 'GET', { token });
    const etag = read.headers.get('etag') as string;
    const patch = { display_name: 'Web shop 2', redirect_uris: ['https://rp.test/cb', 'https://rp.test/cb2'] };
    expect(isProblem(await call(url('/clients/web'), 'PATCH', { token, body: patch }), 428)).toBe(true);
    expect(isProblem(await call(url('/clients/web'), 'PATCH', { token, body: patch, contentType: 'application/json', headers: { 'if-match': etag } }), 415)).toBe(true);
    expect(isProblem(await call(url('/clients/web'), 'PATCH', { token, body: patch, headers: { 'if-match': 'W/' + etag } }), 412)).toBe(true);
    await s.sql("UPDATE clients SET display_name = 'Edited with SQL' WHERE client_id = 'web'");
    const stale = await call(url('/clients/web'), 'PATCH', { token, body: patch, headers: { 'if-match': etag } });
    expect(isProblem(stale, 412)).toBe(true);
    expect((await s.sql("SELECT display_name FROM clients WHERE client_id = 'web'"))[0]?.display_name).toBe('Edited with SQL');
    const fresh = await call(url('/clients/web'), 'GET', { token });
    expect(fresh.headers.get('etag')).not.toBe(etag);
    const done = await call(url('/clients/web'), 'PATCH', { token, body: { ...patch, cors_origins: null }, headers: { 'if-match': fresh.headers.get('etag') as string } });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ display_name: 'Web shop 2', redirect_uris: patch.redirect_uris, cors_origins: [] });
    expect(done.headers.get('etag')).not.toBe(fresh.headers.get('etag'));
  });

  it('of two changes racing with one ETag, one is made (200) and the other refused (412)', async () => {
    const etag = (await call(url('/clients/web'), 'GET', { token })).headers.get('etag') as string;
    const answers = await Promise.all(['A', 'B'].map((name) => call(url('/clients/web'), 'PATCH', { token, body: { display_name: `racer ${name}` }, headers: { 'if-match': etag } })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
    const winner = answers.find((a) => a.status === 200);
    expect((await call(url('/clients/web'), 'GET', { token })).body.display_name).toBe(winner?.body.display_name);
  });

  it('refuses bad input whole, naming each wrong field by a JSON pointer: nothing is written', async () => {
    const before = await count('clients');
    const etag = (await call(url('/clients/web'), 'GET', { token })).headers.get('etag') as string;
    const bad = await call(url('/clients'), 'POST', {
      token, body: { client_id: 'bad one', display_name: 'Evil\u001b[2J', redirect_uris: ['https://ok.test/cb', 'javascript:alert(1)', 7], access_token_lifetime: 'long', colour: 'red' },
    });
    expect(isProblem(bad, 400)).toBe(true);
    expect(bad.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/access_token_lifetime', '/client_id', '/colour', '/redirect_uris/1', '/redirect_uris/2']);
    const evil = await call(url('/clients'), 'POST', { token, body: { client_id: 'evil', display_name: 'Evil\u001b[2J\u0000' } });
    expect(isProblem(evil, 400)).toBe(true);
    expect(evil.body.errors).toEqual([{ pointer: '/display_name', detail: expect.stringContaining('control characters') }]);
    expect(isProblem(await call(url('/clients'), 'POST', { token, body: '{"client_id": "x",', contentType: 'application/json' }), 400)).toBe(true);
    expect(isProblem(await call(url('/clients'), 'POST', { token, body: '[1]', contentType: 'application/json' }), 400)).toBe(true);
    expect(isProblem(await call(url('/clients'), 'POST', { token, body: 'client_id=x', contentType: 'application/x-www-form-urlencoded' }), 415)).toBe(true);
    expect(isProblem(await call(url('/clients'), 'POST', { token, body: '{}', contentType: 'text/plain' }), 415)).toBe(true);
    const unknownScope = await call(url('/clients/web'), 'PATCH', { token, body: { scopes: ['openid', 'orders.writ'] }, headers: { 'if-match': etag } });
    expect(isProblem(unknownScope, 400)).toBe(true);
    expect(unknownScope.body.errors[0].pointer).toBe('/scopes/1');
    expect(isProblem(await call(url('/clients/web'), 'PATCH', { token, body: { grant_types: ['implicit'] }, headers: { 'if-match': etag } }), 400)).toBe(true);
    expect(await count('clients')).toBe(before);
    expect((await call(url('/clients/web'), 'GET', { token })).headers.get('etag')).toBe(etag);
    expect(isProblem(await call(url('/clients?limit=0'), 'GET', { token }), 400)).toBe(true);
    const cursor = await call(url('/clients?cursor=forged&sort=x'), 'GET', { token });
    expect(cursor.body.errors.map((e: { parameter: string }) => e.parameter).sort()).toEqual(['cursor', 'sort']);
  });

  it('rotates a secret (the new one once; the old one stops), removes a client with If-Match (428, 412, 204)', async () => {
    const created = await call(url('/clients'), 'POST', { token, body: { client_id: 'rotating', grant_types: ['client_credentials'], scopes: ['orders.read'] } });
    const rotated = await call(url('/clients/rotating/secret'), 'POST', { token });
    expect(rotated.status).toBe(200);
    expect(rotated.body.client_secret).not.toBe(created.body.client_secret);
    expect(await tokenFor(s.base, 'rotating', rotated.body.client_secret as string, 'orders.read')).toMatch(/\./);
    await expect(tokenFor(s.base, 'rotating', created.body.client_secret as string, 'orders.read')).rejects.toThrow();
    expect(isProblem(await call(url('/clients/nobody/secret'), 'POST', { token }), 404)).toBe(true);
    expect(isProblem(await call(url('/clients/rotating'), 'DELETE', { token }), 428)).toBe(true);
    expect(isProblem(await call(url('/clients/rotating'), 'DELETE', { token, headers: { 'if-match': created.headers.get('etag') as string } }), 412)).toBe(true);
    const removed = await call(url('/clients/rotating'), 'DELETE', { token, headers: { 'if-match': rotated.headers.get('etag') as string } });
    expect(removed.status).toBe(204);
    expect(isProblem(await call(url('/clients/rotating'), 'GET', { token }), 404)).toBe(true);
    expect(isProblem(await call(url('/clients/rotating'), 'DELETE', { token, headers: { 'if-match': rotated.headers.get('etag') as string } }), 404)).toBe(true);
  });

  it('answers a POST sent again with its Idempotency-Key as the first time, changing nothing; another body with the key is 422', async () => {
    const key = randomUUID();
    const body = { client_id: 'once', grant_types: ['client_credentials'], scopes: ['orders.read'] };
    const first = await call(url('/clients'), 'POST', { token, body, headers: { 'idempotency-key': key } });
    const again = await call(url('/clients'), 'POST', { token, body, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(isProblem(await call(url('/clients'), 'POST', { token, body: { ...body, display_name: 'other' }, headers: { 'idempotency-key': key } }), 422)).toBe(true);
    expect((await s.sql("SELECT count(*)::int AS n FROM clients WHERE client_id = 'once'"))[0]?.n).toBe(1);
    // Sent at once with one key: one runs, the other is the same answer or told to wait (409); one client.
    const racing = await Promise.all([1, 2].map(() => call(url('/api-scopes'), 'POST', { token, body: { name: 'race.key' }, headers: { 'idempotency-key': `${key}-2` } })));
    expect(racing.map((a) => a.status).sort().join()).toMatch(/^(201,201|201,409)$/);
    expect(await count('api_scopes')).toBe(2);
    // A refused request leaves its key free.
    const refusedKey = randomUUID();
    expect(isProblem(await call(url('/clients'), 'POST', { token, body: { client_id: 'x y' }, headers: { 'idempotency-key': refusedKey } }), 400)).toBe(true);
    expect((await call(url('/clients'), 'POST', { token, body: { client_id: 'xy', grant_types: ['client_credentials'] }, headers: { 'idempotency-key': refusedKey } })).status).toBe(201);
  });

  it('adds, reads and removes API scopes (201, 409, 400, 428, 204)', async () => {
    const made = await call(url('/api-scopes'), 'POST', { token, body: { name: 'invoices.read' } });
    expect(made.status).toBe(201);
    expect(made.headers.get('location')).toBe('/admin/v1/api-scopes/invoices.read');
    expect(isProblem(await call(url('/api-scopes'), 'POST', { token, body: { name: 'invoices.read' } }), 409)).toBe(true);
    const reserved = await call(url('/api-scopes'), 'POST', { token, body: { name: 'admin_api' } });
    expect(isProblem(reserved, 400)).toBe(true);
    expect(reserved.body.errors[0].pointer).toBe('/name');
    const list = await call(url('/api-scopes'), 'GET', { token });
    expect(list.body.items.map((i: { name: string }) => i.name)).toContain('invoices.read');
    expect(isProblem(await call(url('/api-scopes/invoices.read'), 'DELETE', { token }), 428)).toBe(true);
    expect((await call(url('/api-scopes/invoices.read'), 'DELETE', { token, headers: { 'if-match': made.headers.get('etag') as string } })).status).toBe(204);
    expect(isProblem(await call(url('/api-scopes/invoices.read'), 'GET', { token }), 404)).toBe(true);
  });
});
