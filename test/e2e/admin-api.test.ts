/**
 * The administration API of two `idp serve` processes on one PostgreSQL database and one Redis:
 * a change made through one instance, the other, the command line or SQL is seen by all, two
 * changes racing with one ETag on two instances give one 200 and one 412, an Idempotency-Key
 * holds across instances, a client disabled with SQL loses access on every instance within a
 * second, pages hold while rows come and go, and hostile input is refused without a 500.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable, redisAvailable } from '../helpers/services.ts';
import { runIdp } from '../helpers/process.ts';
import { waitUntil } from '../helpers/waits.ts';
import { ADMIN_SECRET, call, isProblem, startAdminServers, tokenFor, type ServersSetup } from './admin-api-support.ts';
import type { RunningServer } from '../helpers/process.ts';

describe.runIf(postgresAvailable && redisAvailable)('administration API on PostgreSQL and Redis, two instances', () => {
  let s: ServersSetup;
  let apis: [string, string];
  let tokens: [string, string];

  beforeAll(async () => {
    s = await startAdminServers(2);
    const [a, b] = s.servers as [RunningServer, RunningServer];
    apis = [`${a.url}/admin/v1`, `${b.url}/admin/v1`];
    // Each instance has its own base URL here, so its own issuer: a token for each.
    tokens = [await tokenFor(a.url, 'automation', ADMIN_SECRET, 'admin_api'), await tokenFor(b.url, 'automation', ADMIN_SECRET, 'admin_api')];
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('two changes with one ETag on two instances: one 200, one 412; an SQL or command line change between GET and PATCH: 412', async () => {
    const etag = (await call(`${apis[0]}/clients/web`, 'GET', { token: tokens[0] })).headers.get('etag') as string;
    const answers = await Promise.all([0, 1].map((i) => call(`${apis[i]}/clients/web`, 'PATCH', { token: tokens[i], body: { display_name: `instance ${i}` }, headers: { 'if-match': etag } })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
    const fresh = (await call(`${apis[1]}/clients/web`, 'GET', { token: tokens[1] })).headers.get('etag') as string;
    await s.sql("UPDATE clients SET require_consent = true WHERE client_id = 'web'");
    expect(isProblem(await call(`${apis[0]}/clients/web`, 'PATCH', { token: tokens[0], body: { display_name: 'late' }, headers: { 'if-match': fresh } }), 412)).toBe(true);
    const afterSql = (await call(`${apis[0]}/clients/web`, 'GET', { token: tokens[0] })).headers.get('etag') as string;
    const cli = await runIdp(['clients', 'update', 'web', '--name', 'From the command line'], s.env);
    expect(cli.code, cli.stderr).toBe(0);
    expect(isProblem(await call(`${apis[1]}/clients/web`, 'PATCH', { token: tokens[1], body: { display_name: 'late' }, headers: { 'if-match': afterSql } }), 412)).toBe(true);
    expect((await call(`${apis[1]}/clients/web`, 'GET', { token: tokens[1] })).body.display_name).toBe('From the command line');
  });

  it('six identical creates at once on two instances: one 201 whose secret works, five 409, one admin_change', async () => {
    const body = { client_id: 'burst', grant_types: ['client_credentials'], scopes: ['orders.read'] };
    const answers = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => call(`${apis[i % 2]}/clients`, 'POST', { token: tokens[i % 2], body })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    const created = answers.find((a) => a.status === 201);
    const server = s.servers[answers.indexOf(created as (typeof answers)[number]) % 2] as RunningServer;
    expect(await tokenFor(server.url, 'burst', String(created?.body.client_secret), 'orders.read')).toMatch(/\./);
    const logged = s.logs().split('\n').filter((line) => line.includes('"admin_change"') && line.includes('"resource_id":"burst"'));
    expect(logged).toHaveLength(1);
  });

  it('an Idempotency-Key holds across instances: the first answer again, one client', async () => {
    const key = randomUUID();
    const body = { client_id: 'pipeline-staging', grant_types: ['client_credentials'] };
    const first = await call(`${apis[0]}/clients`, 'POST', { token: tokens[0], body, headers: { 'idempotency-key': key } });
    const again = await call(`${apis[1]}/clients`, 'POST', { token: tokens[1], body, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.client_secret).toBe(first.body.client_secret);
    expect(isProblem(await call(`${apis[1]}/clients`, 'POST', { token: tokens[1], body: { ...body, display_name: 'x' }, headers: { 'idempotency-key': key } }), 422)).toBe(true);
    const racing = await Promise.all([0, 1].map((i) => call(`${apis[i]}/clients`, 'POST', { token: tokens[i], body: { client_id: 'raced' }, headers: { 'idempotency-key': `${key}-race` } })));
    expect(racing.some((a) => a.status === 201)).toBe(true);
    expect(racing.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    expect((await s.sql("SELECT count(*)::int AS n FROM clients WHERE client_id = 'raced'"))[0]?.n).toBe(1);
  });

  it('a client disabled with SQL is refused by every instance within a second', async () => {
    await s.sql("UPDATE clients SET enabled = false WHERE client_id = 'automation'");
    for (const i of [0, 1]) {
      await waitUntil(`instance ${i} refuses the disabled client`, async () => (await call(`${apis[i]}/users`, 'GET', { token: tokens[i] })).status === 401, { limitMs: 1000 });
    }
    await s.sql("UPDATE clients SET enabled = true WHERE client_id = 'automation'");
    for (const i of [0, 1]) await waitUntil(`instance ${i} lets it in again`, async () => (await call(`${apis[i]}/users`, 'GET', { token: tokens[i] })).status === 200);
  });

  it('pages hold while rows are added and removed, and hostile input is a problem document, never a 500', async () => {
    await s.sql("INSERT INTO api_scopes (name) SELECT 'scope.' || lpad(i::text, 3, '0') FROM generate_series(1, 25) i");
    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const query: string = cursor === null ? '?limit=4' : `?limit=4&cursor=${cursor}`;
      const page = await call(`${apis[round % 2]}/api-scopes${query}`, 'GET', { token: tokens[round % 2] });
      expect(page.status).toBe(200);
      seen.push(...(page.body.items as { name: string }[]).map((i) => i.name));
      cursor = page.body.next_cursor as string | null;
      if (round === 1) await s.sql("DELETE FROM api_scopes WHERE name IN ('scope.002', 'scope.020'); INSERT INTO api_scopes (name) VALUES ('scope.000'), ('scope.999')");
      round += 1;
    } while (cursor !== null);
    expect(new Set(seen).size).toBe(seen.length);
    for (let i = 3; i <= 25; i++) if (i !== 20) expect(seen).toContain(`scope.${String(i).padStart(3, '0')}`);
    expect(seen).toContain('scope.999');
    expect(seen).not.toContain('scope.020');
    for (const path of ['/clients/%00', '/users/%00', '/api-scopes/%00x', '/users?username=%00']) {
      const answer = await call(`${apis[0]}${path}`, 'GET', { token: tokens[0] });
      expect(answer.status, path).toBeLessThan(500);
    }
    const nul = await call(`${apis[0]}/users`, 'POST', { token: tokens[0], body: { username: 'nul\u0000l', password: 'a long and good password', given_name: '\u202eevil' } });
    expect(isProblem(nul, 400)).toBe(true);
    expect(nul.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/given_name', '/username']);
    expect(s.logs()).not.toContain('unexpected error');
  });
});
