/**
 * Hostile input at every operation of the administration API, in process: every field of every
 * body given values of every wrong kind, odd path segments, odd headers. Each answer is a
 * problem document or a success, never a 500, and no server error is logged.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_OPERATIONS } from '../../src/routes/admin/operations.ts';
import { ADMIN_SECRET, call, isProblem, startAdminApp, tokenFor, type AdminSetup } from '../e2e/admin-api-support.ts';

const VALUES: unknown[] = [null, 0, -1, 1.5, 1e308, true, '', '\u0000', '\u001b[31m', '\u202e', '😀', 'x'.repeat(5000), {}, [], [[[]]], [null], { __proto__: { admin: true } }];
const SEGMENTS = ['%00', '%ff', '..', '%2e%2e', 'a'.repeat(190), '%E2%80%AE', '%20', 'web'];

describe('administration API: hostile input', () => {
  let s: AdminSetup;
  let token: string;
  beforeAll(async () => {
    s = await startAdminApp({ LOG_LEVEL: 'info' });
    token = await tokenFor(s.base, 'automation', ADMIN_SECRET, 'admin_api');
  });
  afterAll(async () => {
    await s?.stop();
  });

  function expectRefusedOrDone(answer: Awaited<ReturnType<typeof call>>, what: string): void {
    expect(answer.status, what).toBeLessThan(500);
    if (answer.status >= 400) expect(isProblem(answer, answer.status), `${what}: ${JSON.stringify(answer.body)}`).toBe(true);
  }

  it('answers every wrong value of every field with a problem document, never a 500', async () => {
    // Writes that would end the caller's access (its client, the signing keys) are left out.
    const operations = ADMIN_OPERATIONS.filter((op) => op.body && !op.path.startsWith('/keys'));
    for (const op of operations) {
      const shape = (op.body?.schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
      for (const field of [...Object.keys(shape), 'unknown_field']) {
        for (const value of VALUES) {
          const path = op.path.replace(/\{\w+\}/g, 'web');
          const answer = await call(`${s.api}${path}`, op.method, { token, body: JSON.stringify({ [field]: value }), contentType: op.body?.mediaType, headers: { 'if-match': '"1"' } });
          expectRefusedOrDone(answer, `${op.method} ${path} ${field}=${JSON.stringify(value).slice(0, 40)}`);
        }
      }
    }
  });

  it('answers odd path segments, query values and headers without a 500', async () => {
    for (const op of ADMIN_OPERATIONS.filter((o) => o.path.includes('{') && (o.method === 'GET' || o.method === 'DELETE'))) {
      for (const segment of SEGMENTS) {
        const path = op.path.replace(/\{\w+\}/g, segment);
        expectRefusedOrDone(await call(`${s.api}${path}`, op.method, { token, headers: { 'if-match': '"1"' } }), `${op.method} ${path}`);
      }
    }
    for (const query of ['limit=-1', 'limit=1e3', 'limit=', 'cursor=%00', 'cursor=' + 'A'.repeat(2000), 'username=%00', 'limit=1&limit=2', 'cursor[a]=1']) {
      expectRefusedOrDone(await call(`${s.api}/users?${query}`, 'GET', { token }), query);
    }
    for (const ifMatch of ['*', 'W/"1"', '"1", "2"', '"' + '9'.repeat(30) + '"', '\u00e9']) {
      expectRefusedOrDone(await call(`${s.api}/clients/web`, 'PATCH', { token, body: {}, headers: { 'if-match': ifMatch } }), `If-Match ${ifMatch}`);
    }
    for (const key of ['', ' ', 'k'.repeat(300), randomUUID()]) {
      expectRefusedOrDone(await call(`${s.api}/api-scopes`, 'POST', { token, body: { name: `fuzz.${randomUUID().slice(0, 8)}` }, headers: { 'idempotency-key': key } }), `Idempotency-Key ${key.slice(0, 20)}`);
    }
    expect(s.logs()).not.toContain('unexpected error');
  });
});
