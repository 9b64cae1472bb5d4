/**
 * The administration API's webhook resources, in process: the scopes that reach them, the secret
 * in the creating and rotating answers only, SSRF refusals naming /url (in production too),
 * ETag and If-Match, Idempotency-Key, one outbox event per change, the delivery log without a
 * receiver's answer, and redelivery.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressPolicy } from '../../src/events/addresses.ts';
import { createAdminApiDeps } from '../../src/routes/admin/deps.ts';
import { ADMIN_BASE, adminApiRoutes } from '../../src/routes/admin/index.ts';
import { ADMIN_SECRET, ADMIN_SEED, HOOKS_SECRET, READER_SECRET, adminChanges, call, isProblem, tokenFor } from '../e2e/admin-api-support.ts';
import { startInProcess, type InProcessApp } from '../helpers/in-process.ts';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('administration API: webhook endpoints', () => {
  let app: InProcessApp;
  let api: string;
  let admin: string;
  let hooks: string;
  let reader: string;
  const url = (path: string) => `${api}${path}`;
  const create = (token: string, body: object, headers: Record<string, string> = {}) => call(url('/webhooks'), 'POST', { token, body, headers });

  beforeAll(async () => {
    app = await startInProcess({ seed: ADMIN_SEED, env: { LOG_LEVEL: 'info' } });
    api = `${app.base}/admin/v1`;
    admin = await tokenFor(app.base, 'automation', ADMIN_SECRET, 'admin_api');
    hooks = await tokenFor(app.base, 'hooks', HOOKS_SECRET, 'admin_console_webhooks');
    reader = await tokenFor(app.base, 'reader', READER_SECRET, 'admin_api_readonly');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('lets admin_console_webhooks manage endpoints but nothing else; admin_api_readonly reads them only', async () => {
    const made = await create(hooks, { url: 'http://127.0.0.1:9/hooks', event_types: ['sign_in'], description: 'Ops' });
    expect(made.status).toBe(201);
    expect(made.headers.get('location')).toBe(`/admin/v1/webhooks/${made.body.id}`);
    expect(made.body).toMatchObject({ url: 'http://127.0.0.1:9/hooks', event_types: ['sign_in'], enabled: true, description: 'Ops' });
    const refused = await call(url('/clients'), 'GET', { token: hooks });
    expect(isProblem(refused, 403)).toBe(true);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="admin_api_readonly"');
    expect((await call(url('/webhooks'), 'GET', { token: reader })).status).toBe(200);
    expect((await call(url(`/webhooks/${made.body.id}`), 'GET', { token: reader })).status).toBe(200);
    const write = await create(reader, { url: 'http://127.0.0.1:9/other' });
    expect(isProblem(write, 403)).toBe(true);
    expect(write.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope", scope="admin_console_webhooks"');
    expect(isProblem(await call(url(`/webhooks/${made.body.id}/test`), 'POST', { token: reader }), 403)).toBe(true);
    expect((await create(admin, { url: 'http://127.0.0.1:9/admin' })).status).toBe(201);
    expect(adminChanges(app.logs())).toContainEqual(expect.objectContaining({ actor: 'api', client_id: 'hooks', action: 'create', resource: 'webhook', resource_id: made.body.id }));
    const paths = (await call(url('/openapi.json'), 'GET')).body.paths;
    const scopes = (op: { security: Array<{ oauth2: string[] }> }) => op.security.flatMap((s) => s.oauth2).sort();
    expect(scopes(paths['/webhooks'].post)).toEqual(['admin_api', 'admin_console_webhooks']);
    expect(scopes(paths['/webhooks/{id}/deliveries'].get)).toEqual(['admin_api', 'admin_api_readonly', 'admin_console_webhooks']);
    expect(Object.keys(paths['/webhooks/{id}'].patch.requestBody.content)).toEqual(['application/merge-patch+json']);
  });

  it('shows the secret in the creating and the rotating answers only, and writes each change to the outbox once', async () => {
    const made = await create(hooks, { url: 'http://127.0.0.1:9/secret' });
    expect(made.body.secret).toMatch(SECRET);
    expect(made.body.event_types).toEqual(['*']);
    const id = made.body.id as string;
    const read = await call(url(`/webhooks/${id}`), 'GET', { token: hooks });
    expect(read.headers.get('etag')).toBe(made.headers.get('etag'));
    expect(Object.keys(read.body)).not.toContain('secret');
    const list = await call(url('/webhooks?limit=200'), 'GET', { token: hooks });
    expect(list.body.items.map((e: { id: string }) => e.id)).toContain(id);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const rotated = await call(url(`/webhooks/${id}/secret`), 'POST', { token: hooks });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(SECRET);
    expect(rotated.body.secret).not.toBe(made.body.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    expect(rotated.headers.get('etag')).not.toBe(made.headers.get('etag'));
    expect(JSON.stringify((await call(url(`/webhooks/${id}`), 'GET', { token: hooks })).body)).not.toContain('whsec_');
    expect(app.logs()).not.toContain(made.body.secret);
    expect(app.logs()).not.toContain(rotated.body.secret);
    // This endpoint takes every event: its own creation and rotation were each written once (not again by the request's log).
    const events = await app.sql("SELECT data->>'action' AS action FROM events WHERE type = 'admin_change' AND data->>'resource_id' = $1 ORDER BY occurred_at", [id]);
    expect(events.map((e) => e.action)).toEqual(['create', 'update']);
    const sealed = await app.sql('SELECT secret_sealed FROM webhook_endpoints WHERE id = $1', [id]);
    expect(String(sealed[0]?.secret_sealed)).not.toContain(rotated.body.secret.slice(6));
  });

  it('refuses a URL that points into the network, naming /url, and an unknown event type by its pointer', async () => {
    const before = (await app.sql('SELECT count(*)::int AS n FROM webhook_endpoints'))[0]?.n;
    const metadata = await create(hooks, { url: 'http://169.254.169.254/latest/meta-data', event_types: ['sign_in', 'no_such_event'] });
    expect(isProblem(metadata, 400)).toBe(true);
    expect(metadata.body.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/event_types/1', '/url']);
    const private10 = await create(hooks, { url: 'http://10.1.2.3/hook' });
    expect(private10.body.errors).toEqual([expect.objectContaining({ pointer: '/url' })]);
    const wrongKind = await create(hooks, { url: 7, enabled: 'yes', colour: 'red' });
    expect(isProblem(wrongKind, 400)).toBe(true);
    expect(wrongKind.body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(expect.arrayContaining(['/url', '/enabled']));
    expect((await app.sql('SELECT count(*)::int AS n FROM webhook_endpoints'))[0]?.n).toBe(before);
  });

  it('in production refuses http and loopback at creation, as problem details pointing at /url', async () => {
    const production: FastifyInstance = Fastify();
    const deps = createAdminApiDeps(app.services, () => {});
    const policy = createAddressPolicy({ production: true, allowedNetworks: [] });
    await production.register(adminApiRoutes, { prefix: ADMIN_BASE, deps: { ...deps, webhooks: { ...deps.webhooks, policy } }, serverUrl: 'https://id.example/admin/v1', tokenUrl: 'https://id.example/connect/token' });
    try {
      for (const target of ['http://hooks.example.com/in', 'https://127.0.0.1/in', 'https://[::ffff:169.254.169.254]/in']) {
        const answer = await production.inject({ method: 'POST', url: `${ADMIN_BASE}/webhooks`, headers: { authorization: `Bearer ${hooks}`, 'content-type': 'application/json' }, payload: { url: target } });
        expect(answer.statusCode).toBe(400);
        expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(answer.json().errors).toEqual([expect.objectContaining({ pointer: '/url' })]);
      }
      expect((await app.sql("SELECT count(*)::int AS n FROM webhook_endpoints WHERE url LIKE '%/in'"))[0]?.n).toBe(0);
    } finally {
      await production.close();
    }
  });

  it('changes and removes with If-Match only: 428 without, 412 when stale (SQL too), 404 when gone', async () => {
    const made = await create(hooks, { url: 'http://127.0.0.1:9/change', description: 'first' });
    const id = made.body.id as string;
    const etag = made.headers.get('etag') as string;
    const patch = { description: null, event_types: ['sign_in', 'logout'], enabled: false };
    expect(isProblem(await call(url(`/webhooks/${id}`), 'PATCH', { token: hooks, body: patch }), 428)).toBe(true);
    expect(isProblem(await call(url(`/webhooks/${id}`), 'DELETE', { token: hooks }), 428)).toBe(true);
    await app.sql("UPDATE webhook_endpoints SET description = 'by SQL' WHERE id = $1", [id]);
    expect(isProblem(await call(url(`/webhooks/${id}`), 'PATCH', { token: hooks, body: patch, headers: { 'if-match': etag } }), 412)).toBe(true);
    expect(isProblem(await call(url(`/webhooks/${id}`), 'DELETE', { token: hooks, headers: { 'if-match': etag } }), 412)).toBe(true);
    const fresh = (await call(url(`/webhooks/${id}`), 'GET', { token: hooks })).headers.get('etag') as string;
    expect(fresh).not.toBe(etag);
    const changed = await call(url(`/webhooks/${id}`), 'PATCH', { token: hooks, body: patch, headers: { 'if-match': fresh } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ description: '', event_types: ['sign_in', 'logout'], enabled: false });
    expect(adminChanges(app.logs())).toContainEqual(expect.objectContaining({ action: 'update', resource: 'webhook', resource_id: id, fields: ['event_types', 'enabled', 'description'] }));
    const racing = await Promise.all(['a', 'b'].map((d) => call(url(`/webhooks/${id}`), 'PATCH', { token: hooks, body: { description: d }, headers: { 'if-match': changed.headers.get('etag') as string } })));
    expect(racing.map((a) => a.status).sort()).toEqual([200, 412]);
    const last = (await call(url(`/webhooks/${id}`), 'GET', { token: hooks })).headers.get('etag') as string;
    expect((await call(url(`/webhooks/${id}`), 'DELETE', { token: hooks, headers: { 'if-match': last } })).status).toBe(204);
    expect(isProblem(await call(url(`/webhooks/${id}`), 'GET', { token: hooks }), 404)).toBe(true);
    expect(isProblem(await call(url(`/webhooks/${id}`), 'DELETE', { token: hooks, headers: { 'if-match': last } }), 404)).toBe(true);
    for (const path of ['/test', '/secret', '/deliveries', '/deliveries/1/redeliver']) {
      expect(isProblem(await call(url(`/webhooks/${id}${path}`), path === '/deliveries' ? 'GET' : 'POST', { token: hooks }), 404)).toBe(true);
    }
    // A refused change wrote no event: of the three PATCHes and three DELETEs, one of each (and the creation) is in the outbox.
    const events = await app.sql("SELECT data->>'action' AS action FROM events WHERE type = 'admin_change' AND data->>'resource_id' = $1", [id]);
    expect(events.map((e) => e.action).sort()).toEqual(['create', 'delete', 'update', 'update']);
  });

  it('replays a creation sent again with its Idempotency-Key (the same secret, one endpoint); another body with it is 422', async () => {
    const body = { url: 'http://127.0.0.1:9/idempotent' };
    const first = await create(hooks, body, { 'idempotency-key': 'hook-create-1' });
    const again = await create(hooks, body, { 'idempotency-key': 'hook-create-1' });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await app.sql("SELECT count(*)::int AS n FROM webhook_endpoints WHERE url = 'http://127.0.0.1:9/idempotent'"))[0]?.n).toBe(1);
    expect(isProblem(await create(hooks, { url: 'http://127.0.0.1:9/else' }, { 'idempotency-key': 'hook-create-1' }), 422)).toBe(true);
  });

  it('pages through the delivery log newest first, with a cursor: every attempt once, ties in start time included', async () => {
    const id = (await create(hooks, { url: 'http://127.0.0.1:9/paged' })).body.id as string;
    const deliveries: string[] = [];
    for (let i = 0; i < 3; i++) {
      const sent = await call(url(`/webhooks/${id}/test`), 'POST', { token: hooks });
      const [row] = await app.sql<{ id: string }>('SELECT id::text AS id FROM webhook_deliveries WHERE endpoint_id = $1 AND event_id = $2', [id, sent.body.event_id]);
      deliveries.push(row?.id as string);
    }
    await app.sql('UPDATE webhook_deliveries SET state = \'failed\', attempts = 3, next_attempt_at = NULL WHERE endpoint_id = $1', [id]);
    await app.sql('DELETE FROM webhook_attempts WHERE delivery_id = ANY($1::bigint[])', [deliveries]);
    // Three attempts each; the first attempts of all three started in the same microsecond.
    await app.sql(`INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status)
      SELECT d, n, timestamptz '2026-11-27 10:00:00.123456+00' + (n - 1) * interval '1 minute', 10 * n, 500
      FROM unnest($1::bigint[]) AS d, generate_series(1, 3) AS n`, [deliveries]);
    const everything = await call(url(`/webhooks/${id}/deliveries?limit=200`), 'GET', { token: reader });
    const order = (everything.body.items as Array<{ delivery_id: string; attempt: number }>).map((a) => `${a.delivery_id}/${a.attempt}`);
    expect(order).toHaveLength(9);
    expect(order.slice(0, 3)).toEqual([...deliveries].reverse().map((d) => `${d}/3`));
    const paged: string[] = [];
    let next = `/webhooks/${id}/deliveries?limit=2`;
    for (let pages = 0; next !== ''; pages++) {
      expect(pages).toBeLessThan(5);
      const page = await call(url(next), 'GET', { token: reader });
      expect(page.status).toBe(200);
      paged.push(...(page.body.items as Array<{ delivery_id: string; attempt: number }>).map((a) => `${a.delivery_id}/${a.attempt}`));
      const cursor = page.body.next_cursor as string | null;
      expect(page.headers.get('link') ?? '').toEqual(cursor === null ? '' : `</admin/v1/webhooks/${id}/deliveries?limit=2&cursor=${cursor}>; rel="next"`);
      next = cursor === null ? '' : `/webhooks/${id}/deliveries?limit=2&cursor=${cursor}`;
    }
    expect(paged).toEqual(order);
    const forged = Buffer.from('k1:1.2', 'utf8').toString('base64url');
    expect(isProblem(await call(url(`/webhooks/${id}/deliveries?cursor=${forged}`), 'GET', { token: reader }), 400)).toBe(true);
    expect(isProblem(await call(url(`/webhooks/${id}/deliveries?cursor=nonsense!`), 'GET', { token: reader }), 400)).toBe(true);
  });

  it('lists delivery attempts without the receiver\'s answer, and redelivers one from the start of the schedule', async () => {
    const id = (await create(hooks, { url: 'http://127.0.0.1:9/log' })).body.id as string;
    const sent = await call(url(`/webhooks/${id}/test`), 'POST', { token: hooks });
    expect(sent.status).toBe(202);
    const [delivery] = await app.sql<{ id: string }>('SELECT d.id::text AS id FROM webhook_deliveries d WHERE d.endpoint_id = $1 AND d.event_id = $2', [id, sent.body.event_id]);
    expect(delivery).toBeDefined();
    // As the delivery worker leaves a failed attempt (what the receiver said is never kept).
    await app.sql("INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status) VALUES ($1::bigint, 1, now(), 42, 503)", [delivery?.id]);
    await app.sql("UPDATE webhook_deliveries SET state = 'failed', attempts = 1, step = 9, next_attempt_at = NULL WHERE id = $1::bigint", [delivery?.id]);
    const log = await call(url(`/webhooks/${id}/deliveries?limit=10`), 'GET', { token: reader });
    expect(log.status).toBe(200);
    expect(log.body).toEqual({
      items: [{ delivery_id: delivery?.id, event_id: sent.body.event_id, event_type: 'webhook.test', attempt: 1, started_at: expect.any(String), duration_ms: 42, status: 503, error: null, delivery_state: 'failed', next_attempt_at: null }],
      next_cursor: null,
    });
    expect(isProblem(await call(url(`/webhooks/${id}/deliveries?limit=0`), 'GET', { token: hooks }), 400)).toBe(true);
    expect(isProblem(await call(url(`/webhooks/${id}/deliveries/${delivery?.id}/redeliver`), 'POST', { token: reader }), 403)).toBe(true);
    const again = await call(url(`/webhooks/${id}/deliveries/${delivery?.id}/redeliver`), 'POST', { token: hooks });
    expect([again.status, again.body]).toEqual([202, { delivery_id: delivery?.id }]);
    const [row] = await app.sql('SELECT state, step, next_attempt_at <= now() AS due FROM webhook_deliveries WHERE id = $1::bigint', [delivery?.id]);
    expect(row).toEqual({ state: 'pending', step: 0, due: true });
    expect(isProblem(await call(url(`/webhooks/${id}/deliveries/999999/redeliver`), 'POST', { token: hooks }), 404)).toBe(true);
    expect(isProblem(await call(url(`/webhooks/${id}/deliveries/x'1/redeliver`), 'POST', { token: hooks }), 404)).toBe(true);
  });
});
