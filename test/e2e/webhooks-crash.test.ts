/**
 * Nothing lost when an instance dies: an instance killed (SIGKILL) while its attempt is in
 * flight leaves the delivery to another instance, which makes the next attempt once the first
 * one's lease has run out; the lost attempt is recorded as `interrupted`. A change answered 2xx
 * (an administration API call, a new password, an authenticator app or "Remove access" on the account page) by an
 * instance killed at once is delivered by its successor: its events were written in its
 * transaction. A change rolled back records nothing.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readForm, type Browser, type Page } from '../helpers/browser-http.ts';
import { runIdp, seedWith, startServer, type RunningServer } from '../helpers/process.ts';
import { awayFromStepEnd, nowSeconds, totp } from '../helpers/totp.ts';
import { AddressedBrowser, signIn } from './account-support.ts';
import { createTestDatabase, postgresAvailable, runSql, type TestDatabase } from '../helpers/services.ts';
import { waitUntil } from '../helpers/waits.ts';
import { startReceiver, verifySignature } from '../helpers/webhook-receiver.ts';

const CLIENT = { client_id: 'svc', client_secret: 'svc-secret-0123456789abcdefghijklmnopqrstu' };
const AUTOMATION = { client_id: 'automation', client_secret: 'automation-secret-0123456789abcdefghijkl' };
const ANN = { username: 'ann', password: 'the first of three long passwords 7' };
const BEN = { username: 'ben', password: 'the second of three long passwords 7' };
const CID = { username: 'cid', password: 'the third of three long passwords 7' };
const DEE = { username: 'dee', password: 'the fourth of the long passwords 7' };

/** POSTs `body` and calls `kill` as soon as the answer's head is read, before anything else runs; resolves with its status and request id. */
function answeredThenKilled(url: string, headers: Record<string, string>, body: string, kill: () => void): Promise<{ status: number; requestId: string | undefined }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers }, (response) => {
      kill();
      response.resume();
      const requestId = response.headers['x-request-id'];
      resolve({ status: response.statusCode ?? 0, requestId: typeof requestId === 'string' ? requestId : undefined });
    });
    request.on('error', reject);
    request.end(body);
  });
}

const basic = ({ client_id, client_secret }: typeof CLIENT) => `Basic ${Buffer.from(`${client_id}:${client_secret}`).toString('base64')}`;

/** A form post of `browser` (its cookies), as `answeredThenKilled` sends it. */
const formPost = (browser: Browser, form: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
  body: new URLSearchParams(form).toString(),
});

const csrfOf = (page: Page) => /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? '';

describe.runIf(postgresAvailable)('webhooks when an instance dies', () => {
  let db: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, IDP_SECRET: Buffer.alloc(32, 9).toString('base64') };
    await seedWith({
      clients: [
        { ...CLIENT, display_name: 'Service', grant_types: ['client_credentials'], scopes: [], redirect_uris: [] },
        { ...AUTOMATION, grant_types: ['client_credentials'], scopes: ['admin_api'] },
      ],
      users: [ANN, BEN, CID, DEE],
    }, env);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('delivers from another instance an event whose instance was killed mid-delivery', async () => {
    // The first request is never answered: the instance dies while it waits.
    const receiver = await startReceiver((request) => (receiver.received.indexOf(request) === 0 ? 'hang' : { status: 204 }));
    const servers: RunningServer[] = [];
    try {
      const added = await runIdp(['webhooks', 'add', '--url', `${receiver.url}/hook`, '--event', 'token_issued', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      const { id, secret } = JSON.parse(added.stdout) as { id: string; secret: string };
      const first = await startServer(env);
      servers.push(first);
      const res = await fetch(`${first.url}/connect/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(CLIENT) },
        body: 'grant_type=client_credentials',
      });
      expect(res.status).toBe(200);
      await waitUntil('the first attempt in flight', () => receiver.received.length === 1);
      first.child.kill('SIGKILL');
      await waitUntil('the first instance gone', () => first.child.signalCode === 'SIGKILL');
      servers.push(await startServer(env));
      await waitUntil('the event delivered by the second instance', () => receiver.received.length >= 2);
      const [lost, delivered] = receiver.received;
      expect(delivered?.headers['webhook-id']).toBe(lost?.headers['webhook-id']);
      expect(verifySignature(secret, delivered as NonNullable<typeof delivered>)).toBe(true);
      expect(JSON.parse(delivered?.body ?? '{}')).toMatchObject({ type: 'token_issued', data: { client_id: 'svc' } });
      await waitUntil('the delivery recorded', async () => (await runSql<{ state: string }>(db.url, 'SELECT state FROM webhook_deliveries'))[0]?.state === 'succeeded');
      const log = JSON.parse((await runIdp(['webhooks', 'deliveries', id, '--json'], env)).stdout) as { attempts: Array<Record<string, unknown>> };
      expect(log.attempts.map((a) => [a.attempt, a.status, a.error])).toStrictEqual([[2, 204, null], [1, null, 'interrupted']]);
      expect(receiver.received).toHaveLength(2);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });

  it('delivers the admin_change of an API change answered 2xx by an instance killed right after answering', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    const servers: RunningServer[] = [];
    try {
      const added = await runIdp(['webhooks', 'add', '--url', `${receiver.url}/changes`, '--event', 'admin_change', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      const first = await startServer(env);
      servers.push(first);
      const token = await fetch(`${first.url}/connect/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(AUTOMATION) }, body: 'grant_type=client_credentials&scope=admin_api',
      });
      const { access_token: accessToken } = (await token.json()) as { access_token: string };
      // Killed the moment its answer's status line arrives: an event gathered to be written
      // after the change (20 ms later) is lost here; one written in the change's transaction is not.
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` };
      const { status, requestId } = await answeredThenKilled(`${first.url}/admin/v1/api-scopes`, headers, JSON.stringify({ name: 'crash.proof' }), () => first.child.kill('SIGKILL'));
      expect(status).toBe(201);
      expect(requestId).toMatch(/^[\w.-]+$/);
      await waitUntil('the first instance gone', () => first.child.signalCode === 'SIGKILL');
      servers.push(await startServer(env));
      const change = await waitUntil('the admin_change delivered', () => receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
        .find((event) => event.type === 'admin_change' && event.data.resource_id === 'crash.proof'));
      // Who and from where, as the request's log line says it: its request id, its address, the caller.
      expect(change.data).toStrictEqual({
        request_id: requestId, source_address: '127.0.0.1', client_id: 'automation', actor: 'api', action: 'create', resource: 'api_scope', resource_id: 'crash.proof', fields: [],
      });
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });
  /** The user's account page, signed in with the password. */
  async function accountPage(server: RunningServer, user: typeof ANN): Promise<{ browser: AddressedBrowser; page: Page }> {
    const browser = new AddressedBrowser();
    const page = await signIn(browser, await browser.follow(await browser.get(`${server.url}/account`), server.url), server.url, user.username, user.password);
    expect(page.body).toContain('<h1>Your account</h1>');
    return { browser, page };
  }

  const userIdOf = async (user: typeof ANN) => (await runSql<{ id: string }>(db.url, 'SELECT id FROM users WHERE username = $1', [user.username]))[0]?.id ?? '';
  const eventsAt = (receiver: { received: Array<{ body: string }> }) => receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });

  /** Posts `form` to `path` of the account page; the instance is killed the moment the answer's head arrives; a successor starts. */
  async function changedThenKilled(servers: RunningServer[], browser: Browser, url: string, form: Record<string, string>) {
    const first = servers[servers.length - 1] as RunningServer;
    const { headers, body } = formPost(browser, form);
    const answer = await answeredThenKilled(url, headers, body, () => first.child.kill('SIGKILL'));
    await waitUntil('the first instance gone', () => first.child.signalCode === 'SIGKILL');
    servers.push(await startServer(env));
    return answer;
  }

  it('delivers the key_rotated of an API rotation answered 2xx by an instance killed right after answering', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    const servers: RunningServer[] = [];
    try {
      const added = await runIdp(['webhooks', 'add', '--url', `${receiver.url}/keys`, '--event', 'key_rotated', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      const first = await startServer(env);
      servers.push(first);
      const token = await fetch(`${first.url}/connect/token`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(AUTOMATION) }, body: 'grant_type=client_credentials&scope=admin_api',
      });
      const { access_token: accessToken } = (await token.json()) as { access_token: string };
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` };
      const { status, requestId } = await answeredThenKilled(`${first.url}/admin/v1/keys/rotate`, headers, '{}', () => first.child.kill('SIGKILL'));
      expect(status).toBe(200);
      await waitUntil('the first instance gone', () => first.child.signalCode === 'SIGKILL');
      servers.push(await startServer(env));
      const rotated = await waitUntil('the key_rotated delivered', () => receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
        .find((event) => event.type === 'key_rotated' && event.data.actor === 'api'));
      expect(rotated.data).toStrictEqual({ request_id: requestId, source_address: '127.0.0.1', client_id: 'automation', kid: expect.any(String), actor: 'api' });
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });

  it('delivers the password_changed of a new password on the account page answered by an instance killed right after answering', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    const servers: RunningServer[] = [];
    try {
      const added = await runIdp(['webhooks', 'add', '--url', `${receiver.url}/passwords`, '--event', 'password_changed', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      servers.push(await startServer(env));
      const { browser, page } = await accountPage(servers[0] as RunningServer, ANN);
      const form = { csrf_token: csrfOf(page), current_password: ANN.password, new_password: 'a new long password for the first 8', confirm_password: 'a new long password for the first 8' };
      const { status, requestId } = await changedThenKilled(servers, browser, `${servers[0]?.url}/account/password`, form);
      expect(status).toBe(303);
      const userId = await userIdOf(ANN);
      const changed = await waitUntil('the password_changed delivered', () => eventsAt(receiver).find((e) => e.type === 'password_changed' && e.data.user_id === userId));
      expect(changed.data).toStrictEqual({ request_id: requestId, source_address: '127.0.0.1', user_id: userId, via: 'account_page' });
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });

  it('delivers the mfa_added and recovery_codes_generated of an authenticator app added on the account page answered by an instance killed right after answering', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    const servers: RunningServer[] = [];
    try {
      const added = await runIdp(['webhooks', 'add', '--url', `${receiver.url}/factors`, '--event', 'mfa_added', '--event', 'recovery_codes_generated', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      servers.push(await startServer(env));
      const base = servers[0]?.url ?? '';
      const { browser, page } = await accountPage(servers[0] as RunningServer, BEN);
      const setUp = await browser.post(`${base}/account/totp`, { csrf_token: csrfOf(page) });
      const secret = (/<p class="secret"><code>([^<]+)<\/code>/.exec(setUp.body)?.[1] ?? '').replace(/\s+/g, '');
      const confirm = readForm(setUp.body, base);
      await awayFromStepEnd();
      const { status } = await changedThenKilled(servers, browser, confirm.action, { ...confirm.fields, otp: await totp(secret, nowSeconds()) });
      expect(status).toBe(200);
      const userId = await userIdOf(BEN);
      const factor = await waitUntil('the mfa_added delivered', () => eventsAt(receiver).find((e) => e.type === 'mfa_added' && e.data.user_id === userId));
      expect(factor.data).toMatchObject({ source_address: '127.0.0.1', user_id: userId, kind: 'totp' });
      const codes = await waitUntil('the recovery_codes_generated delivered', () => eventsAt(receiver).find((e) => e.type === 'recovery_codes_generated' && e.data.user_id === userId));
      expect(codes.data).toMatchObject({ request_id: factor.data.request_id, user_id: userId, count: 10 });
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });

  it('delivers the access_removed of "Remove access" on the account page answered by an instance killed right after answering', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    const servers: RunningServer[] = [];
    try {
      const added = await runIdp(['webhooks', 'add', '--url', `${receiver.url}/access`, '--event', 'access_removed', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      servers.push(await startServer(env));
      const { browser, page } = await accountPage(servers[0] as RunningServer, DEE);
      const { status, requestId } = await changedThenKilled(servers, browser, `${servers[0]?.url}/account/applications/remove`, { csrf_token: csrfOf(page), client_id: CLIENT.client_id });
      expect(status).toBe(303);
      const userId = await userIdOf(DEE);
      const removed = await waitUntil('the access_removed delivered', () => eventsAt(receiver).find((e) => e.type === 'access_removed' && e.data.user_id === userId));
      expect(removed.data).toStrictEqual({ request_id: requestId, source_address: '127.0.0.1', user_id: userId, client_id: CLIENT.client_id });
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
      await receiver.close();
    }
  });

  it('records nothing of a change that is rolled back: the password stays, no event is delivered, no audit line is written', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    let server: RunningServer | undefined;
    // The event's own row is refused: the change it records is rolled back with it.
    await runSql(db.url, `CREATE FUNCTION refuse_in_test() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await runSql(db.url, `CREATE TRIGGER refuse_password_changed BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.type = 'password_changed') EXECUTE FUNCTION refuse_in_test()`);
    try {
      const added = await runIdp(['webhooks', 'add', '--url', `${receiver.url}/rolled-back`, '--event', 'password_changed', '--event', 'mfa_added', '--json'], env);
      expect(added.code, added.stderr).toBe(0);
      server = await startServer({ ...env, LOG_LEVEL: 'info' });
      const hashOf = async () => (await runSql<{ password_hash: string }>(db.url, 'SELECT password_hash FROM users WHERE username = $1', [CID.username]))[0]?.password_hash;
      const before = await hashOf();
      const { browser, page } = await accountPage(server, CID);
      const answer = await browser.post(`${server.url}/account/password`, {
        csrf_token: csrfOf(page), current_password: CID.password, new_password: 'a new long password for the third 8', confirm_password: 'a new long password for the third 8',
      });
      expect(answer.status).toBe(500);
      expect(await hashOf()).toBe(before);
      // The old password still signs in; the change left nothing behind.
      await accountPage(server, CID);
      const userId = await userIdOf(CID);
      // Its sign-ins are recorded (the audit log keeps every event); the change is not.
      expect(await runSql(db.url, `SELECT type FROM events WHERE data->>'user_id' = $1 AND type <> 'sign_in'`, [userId])).toStrictEqual([]);
      expect(server.output()).not.toMatch(/"event":"password_changed"/);
      expect(eventsAt(receiver).filter((e) => e.data.user_id === userId)).toStrictEqual([]);
    } finally {
      await runSql(db.url, 'DROP TRIGGER refuse_password_changed ON events');
      await runSql(db.url, 'DROP FUNCTION refuse_in_test()');
      await server?.stop();
      await receiver.close();
    }
  });
});
